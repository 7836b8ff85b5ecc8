import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUdpDnsClient } from "../../src/dns/dns-client.testing.js";
import { buildTestQuery, decodeTestAnswer } from "../../src/dns/dns.testing.js";
import { createStore } from "../../src/store/create-store.js";
import { createTestDatabase } from "../helpers/pg.js";
import { childrenOf, cpuTicks, isAlive } from "../helpers/processes.js";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";
import { makeTestCertificate, type TestCertificate } from "../helpers/tls-cert.js";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const run = promisify(execFile);

/** The DNS workers of the primary `ppid` (tsx's esbuild is a child too). */
const workersOf = (ppid: number) => childrenOf(ppid, "dns-worker");

/** A new worker compiles and opens its store: tens of seconds when the shared machine is loaded. */
async function until<T>(
  what: string,
  probe: () => T | null | Promise<T | null>,
  timeoutMs = 60_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const BACKENDS = [
  {
    name: "sqlite",
    open: async () => ({
      env: { DATABASE_URL: "" },
      databaseUrl: undefined as string | undefined,
      drop: async () => {},
    }),
  },
  {
    name: "postgres",
    open: async () => {
      const db = await createTestDatabase();
      return { env: { DATABASE_URL: db.url }, databaseUrl: db.url, drop: db.drop };
    },
  },
];

describe.each(BACKENDS)("the dns role over DNS_WORKERS=2 processes ($name)", (backend) => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-dns-workers-"));
  let cert: TestCertificate;
  let db: Awaited<ReturnType<(typeof BACKENDS)[number]["open"]>>;
  let child: ChildProcess;
  let output = "";
  let port = 0;
  let tlsPort = 0;

  /** One UDP query from a fresh socket (so from a fresh source port), decoded. */
  async function ask(name: string, type: string) {
    const c = createUdpDnsClient("127.0.0.1", port);
    try {
      const answer = await Promise.race([
        c.ask(buildTestQuery(name, type, { id: 1 + Math.floor(Math.random() * 60_000) })),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer in 3 s")), 3_000)),
      ]);
      return decodeTestAnswer(answer);
    } finally {
      c.close();
    }
  }

  beforeAll(async () => {
    cert = makeTestCertificate(dataDir);
    db = await backend.open();
    child = spawn(process.execPath, ["--import", "tsx", MAIN, "start", "--fixtures"], {
      env: {
        ...process.env,
        ...db.env,
        DATA_DIR: dataDir,
        OMNINAME_ROLES: "dns",
        DNS_WORKERS: "2",
        DNS_PORT: "0",
        DNS_TLS_PORT: "0",
        TLS_CERT_FILE: cert.certFile,
        TLS_KEY_FILE: cert.keyFile,
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
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${output}`))),
    );
    await Promise.race([
      exited,
      until("the banner", () => (/DNS processes:\s+2/.test(output) ? true : null), 150_000),
    ]);
    port = Number(/DNS \(UDP\+TCP\):\s+127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
    tlsPort = Number(/DNS-over-TLS:\s+127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
  }, 180_000);

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    }
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("two worker processes answer UDP, TCP and TLS on one set of ports, and both take queries", async () => {
    const workers = workersOf(child.pid!);
    expect(workers).toHaveLength(2);
    expect((await ask("bob.x", "A")).answer).toEqual([expect.stringMatching(/198\.51\.100\.7/)]);
    const tcp = await run("kdig", ["@127.0.0.1", "-p", String(port), "+tcp", "bob.x", "A"]);
    expect(tcp.stdout, output).toMatch(/bob\.x\.\s+\d+\s+IN\s+A\s+198\.51\.100\.7/);
    const tls = await run("kdig", [
      "@127.0.0.1",
      "-p",
      String(tlsPort),
      "+tls",
      `+tls-ca=${cert.certFile}`,
      "bob.x",
      "A",
    ]);
    expect(tls.stdout).toMatch(/bob\.x\.\s+\d+\s+IN\s+A\s+198\.51\.100\.7/);
    // A burst over UDP from 40 client sockets: the kernel spreads the clients over the workers'
    // sockets by source address and port (SO_REUSEPORT, DNS_UDP_BATCH), so both workers take some.
    const before = workers.map(cpuTicks);
    await Promise.all(
      Array.from({ length: 40 }, async (_, c) => {
        const client = createUdpDnsClient("127.0.0.1", port);
        await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            client.ask(buildTestQuery("bob.x", "A", { id: c * 100 + i + 1 })),
          ),
        );
        client.close();
      }),
    );
    const used = workers.map((pid, i) => cpuTicks(pid) - before[i]);
    for (const ticks of used) expect(ticks).toBeGreaterThan(0);
  }, 150_000);

  it("every worker answers a name written after start by another process (no stale cache)", async () => {
    const name = `fresh${Date.now()}.x`;
    // Asked first, so that each worker may hold the NXDOMAIN in its answer cache.
    for (let i = 0; i < 10; i++) expect((await ask(name, "A")).rcode).toBe("NXDOMAIN");
    const writer = await createStore({ databaseUrl: db.databaseUrl, dataDir });
    try {
      const id = await writer.domainMap.upsertDomain(
        testDomain({ tokenId: tokenIdOf(Date.now()), name, sld: name.slice(0, -2), tld: "x" }),
      );
      await writer.domainMap.replaceRecords(id, [
        { key: "record.A.0", value: "192.0.2.77", nativeKey: "record.A.0", nativeValue: "192.0.2.77" },
      ]);
    } finally {
      await writer.close();
    }
    // Within a few seconds every answer, from whichever worker, is the new one: 20 in a row.
    await until(
      "20 fresh answers in a row",
      async () => {
        for (let i = 0; i < 20; i++) if ((await ask(name, "A")).rcode !== "NOERROR") return null;
        return true;
      },
      10_000,
    );
  }, 150_000);

  it("a worker killed with SIGKILL is replaced; the others answer meanwhile", async () => {
    const [victim, other] = workersOf(child.pid!);
    process.kill(victim, "SIGKILL");
    // Once it is gone (its own UDP socket closed with it: what was queued on it is lost, as NSD's
    // would be), the other answers while the replacement starts.
    // (Reaped, not only unlisted: a process being killed drops its memory, so its command line,
    // before its files.)
    await until("the victim gone", () => (isAlive(victim) ? null : true));
    expect((await ask("bob.x", "A")).rcode).toBe("NOERROR");
    const replaced = await until("a new worker", () => {
      const now = workersOf(child.pid!);
      return now.length === 2 && !now.includes(victim) ? now : null;
    });
    expect(replaced).toContain(other);
    const fresh = replaced.find((p) => p !== other)!;
    // The new worker takes its share of the shared socket.
    const before = cpuTicks(fresh);
    await until("the new worker to answer", async () => {
      const client = createUdpDnsClient("127.0.0.1", port);
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => client.ask(buildTestQuery("bob.x", "A", { id: i + 1 }))),
      );
      client.close();
      return cpuTicks(fresh) > before ? true : null;
    });
  }, 150_000);

  it("every worker killed at once: the primary (no other role) stays and starts them again", async () => {
    const before = workersOf(child.pid!);
    for (const pid of before) process.kill(pid, "SIGKILL");
    const after = await until("two new workers", () => {
      const now = workersOf(child.pid!);
      return now.length === 2 && now.every((p) => !before.includes(p)) ? now : null;
    });
    expect(after).toHaveLength(2);
    expect(child.exitCode).toBeNull();
    await until("an answer from the new workers", async () =>
      (await ask("bob.x", "A").catch(() => null))?.rcode === "NOERROR" ? true : null,
    );
  }, 150_000);

  it("SIGKILL of the primary leaves no worker behind, and frees the ports", async () => {
    const workers = workersOf(child.pid!);
    expect(workers).toHaveLength(2);
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await gone;
    await until("the workers to exit", () => (workers.some(isAlive) ? null : true), 10_000);
    await until(
      "the UDP port to be free",
      async () => {
        const s = (await import("node:dgram")).createSocket("udp4");
        const free = await new Promise<boolean>((r) => {
          s.once("error", () => r(false));
          s.bind(port, "127.0.0.1", () => r(true));
        });
        s.close();
        return free ? true : null;
      },
      10_000,
    );
  }, 150_000);
});

describe("DNS_WORKERS=2 on a UDP port already taken", () => {
  it("start fails at once (before any worker is forked), naming the address and why", async () => {
    const taken = createSocket("udp4");
    await new Promise<void>((resolve) => taken.bind(0, "127.0.0.1", () => resolve()));
    const port = taken.address().port;
    const dir = mkdtempSync(join(tmpdir(), "omniname-dns-taken-"));
    try {
      const r = await run(process.execPath, ["--import", "tsx", MAIN, "start"], {
        env: {
          ...process.env,
          OMNINAME_ROLES: "dns",
          DNS_WORKERS: "2",
          DNS_PORT: String(port),
          DATA_DIR: dir,
          LOG_LEVEL: "warn",
        },
      }).catch((e: { code: number; stderr: string }) => e);
      expect((r as { code?: number }).code).toBe(1);
      expect((r as { stderr: string }).stderr).toContain(
        `DNS UDP 127.0.0.1:${port}: bind: Address already in use`,
      );
    } finally {
      taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});

describe("omniname dns-worker by hand", () => {
  it("refuses to run outside omniname start: exit 2 and why", async () => {
    const r = await run(process.execPath, ["--import", "tsx", MAIN, "dns-worker"]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((r as { code?: number }).code).toBe(2);
    expect((r as { stderr: string }).stderr).toMatch(
      /started by omniname start \(DNS_WORKERS\), not by hand/,
    );
  }, 150_000);
});
