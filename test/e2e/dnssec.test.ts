import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childrenOf } from "../helpers/processes.js";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const run = promisify(execFile);

async function omniname(env: Record<string, string>, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", MAIN, ...args], {
      env: { ...process.env, LOG_LEVEL: "silent", DATABASE_URL: "", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

async function delv(port: number, anchor: string, ...query: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(
      "delv",
      ["@127.0.0.1", "-p", String(port), "-a", anchor, "+root=x", ...query],
      { timeout: 20_000 },
    );
    return stdout + stderr;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return `${err.stdout ?? ""}${err.stderr ?? ""}`;
  }
}

describe("DNSSEC=true with DNS_WORKERS=2: one key in DATA_DIR, the CLI's trust anchor, delv", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-dnssec-e2e-"));
  const env = { DATA_DIR: dataDir, DNSSEC: "true" };
  let child: ChildProcess;
  let output = "";
  let port = 0;
  let anchor = "";

  beforeAll(async () => {
    child = spawn(process.execPath, ["--import", "tsx", MAIN, "start", "--fixtures"], {
      env: {
        ...process.env,
        ...env,
        DATABASE_URL: "",
        OMNINAME_ROLES: "dns",
        DNS_WORKERS: "2",
        DNS_PORT: "0",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const end = Date.now() + 150_000;
    while (!/DNS processes:\s+2/.test(output)) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
      if (Date.now() > end) throw new Error(`no banner: ${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    port = Number(/DNS \(UDP\+TCP\):\s+127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
    const anchors = await omniname(env, "dnssec", "anchors", "--zone", "x");
    expect(anchors.code, anchors.stderr).toBe(0);
    anchor = join(dataDir, "anchor.conf");
    writeFileSync(anchor, anchors.stdout);
  }, 180_000);

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the key is generated once into DATA_DIR, mode 0600, and never printed by the CLI", () => {
    const file = join(dataDir, "dnssec.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(readFileSync(anchor, "utf8")).toMatch(
      /^trust-anchors \{\n {2}x\. static-key 257 3 13 "[A-Za-z0-9+/=]{88}";\n\};\n$/,
    );
  });

  it("both workers sign with that key: 12 validations from fresh source ports, positive and negative", async () => {
    expect(childrenOf(child.pid!, "dns-worker")).toHaveLength(2);
    const results = await Promise.all(
      Array.from({ length: 4 }, async () => [
        await delv(port, anchor, "bob.x", "A"),
        await delv(port, anchor, "nope-nothing.x", "A"),
        await delv(port, anchor, "bob.x", "CAA"),
      ]),
    );
    for (const [positive, nxdomain, nodata] of results) {
      expect(positive).toMatch(/^; fully validated$/m);
      expect(positive).toMatch(/bob\.x\.\s+\d+\s+IN\s+A\s+198\.51\.100\.7/);
      expect(nxdomain).toMatch(/^; negative response, fully validated$/m);
      expect(nodata).toMatch(/^; negative response, fully validated$/m);
    }
  }, 120_000);

  it("dnssec ds prints the DNSKEY and a SHA-256 DS that match what the server publishes", async () => {
    const ds = await omniname(env, "dnssec", "ds", "--zone", "x");
    expect(ds.code).toBe(0);
    const dnskey = /x\.\t3600\tIN\tDNSKEY\t257 3 13 (\S+)/.exec(ds.stdout)?.[1];
    expect(ds.stdout).toMatch(/x\.\t3600\tIN\tDS\t\d+ 13 2 [0-9A-F]{64}/);
    const { stdout } = await run("dig", ["@127.0.0.1", "-p", String(port), "+short", "x.", "DNSKEY"]);
    expect(stdout.replace(/\s/g, "")).toBe(`257313${dnskey}`);
    // BIND's own digest of the served key is the DS the CLI printed.
    const keyFile = join(dataDir, "served.key");
    writeFileSync(keyFile, `x. 3600 IN DNSKEY ${stdout.trim()}\n`);
    const bind = await run("dnssec-dsfromkey", ["-2", "-f", keyFile, "x"]);
    const digest = /DS (\d+ 13 2 [0-9A-F]+)/.exec(bind.stdout)?.[1];
    expect(ds.stdout).toContain(`IN\tDS\t${digest}`);
  }, 120_000);

  it("dnssec: bad arguments are refused with a message, never a crash", async () => {
    expect((await omniname(env, "dnssec")).code).toBe(2);
    const badZone = await omniname(env, "dnssec", "ds", "--zone", "a b");
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toMatch(/not a DNS name/);
    expect((await omniname(env, "dnssec", "retire", "1")).stderr).toMatch(/no key with tag 1/);
    const missing = await omniname(
      { ...env, DNSSEC_KEY_FILE: join(dataDir, "absent.pem") },
      "dnssec",
      "ds",
      "--zone",
      "x",
    );
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/absent\.pem/);
    const notAKey = join(dataDir, "not-a-key.pem");
    writeFileSync(notAKey, "hello\n");
    const junk = await omniname({ ...env, DNSSEC_KEY_FILE: notAKey }, "dnssec", "ds", "--zone", "x");
    expect(junk.code).not.toBe(0);
    expect(junk.stderr).toMatch(/no PEM private key/);
    expect(junk.stderr).not.toMatch(/at .*\.ts:\d+/);
  }, 240_000);

  it("zone export signs with the same key: kzonecheck --dnssec on accepts it, its DNSKEY is the served one", async () => {
    const out = join(dataDir, "zones");
    const r = await omniname(env, "zone", "export", "--tld", "x", "--out", out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^signed \(DNSSEC=true\)/m);
    const file = join(out, "x.zone");
    const knot = await run("kzonecheck", ["--dnssec", "on", "-o", "x", file]).catch((e) => e);
    expect(`${knot.stdout}${knot.stderr}`).toBe("");
    const text = readFileSync(file, "utf8");
    const served = (await run("dig", ["@127.0.0.1", "-p", String(port), "+short", "x.", "DNSKEY"])).stdout;
    // The served DNSKEY RDATA is in the file (dig splits its base64 in two).
    expect(text.replace(/\s/g, "")).toContain(served.replace(/\s/g, ""));
    expect(text).toMatch(/^bob\.x\.\t\d+\tIN\tRRSIG\tA 13 2 /m);
    expect(text).toMatch(/\tIN\tNSEC\t/);
  }, 120_000);

  it("a rollover by the CLI: add-key publishes a second key, retire removes the first, never the last", async () => {
    const tagsOf = (text: string) => [...text.matchAll(/; x\. key (\d+)/g)].map((m) => m[1]);
    const [old] = tagsOf((await omniname(env, "dnssec", "ds", "--zone", "x")).stdout);
    const added = await omniname(env, "dnssec", "add-key");
    expect(added.code, added.stderr).toBe(0);
    const two = tagsOf((await omniname(env, "dnssec", "ds", "--zone", "x")).stdout);
    expect(two).toHaveLength(2);
    expect(two[0]).toBe(old);
    expect(statSync(join(dataDir, "dnssec.key")).mode & 0o777).toBe(0o600);
    expect((await omniname(env, "dnssec", "retire", old)).code).toBe(0);
    expect(tagsOf((await omniname(env, "dnssec", "ds", "--zone", "x")).stdout)).toEqual([two[1]]);
    const last = await omniname(env, "dnssec", "retire", two[1]);
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/the only key/);
  }, 240_000);
});
