import { type ChildProcess, execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsRoleProcess } from "../helpers/server-process.js";

const run = promisify(execFile);
const SECRET = "ZTJlLXhmci1zZWNyZXQtZTJlLXhmci1zZWNyZXQ=";

async function kdig(args: string[]): Promise<string> {
  try {
    const r = await run("kdig", args);
    return r.stdout + r.stderr;
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string };
    return `${x.stdout ?? ""}${x.stderr ?? ""}`;
  }
}

describe("omniname start (dns role) with DNS_TSIG_KEYS: zone transfers", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-dns-xfr-"));
  let child: ChildProcess | null = null;
  let output = () => "";
  let port = 0;

  beforeAll(async () => {
    const dns = await startDnsRoleProcess(dataDir, {
      DNS_TSIG_KEYS: `xfr-e2e:hmac-sha256:${SECRET}`,
      // No secondary listens there: NOTIFYs go unanswered, and nothing breaks.
      DNS_NOTIFY: "127.0.0.1:9",
      LOG_LEVEL: "info",
    });
    child = dns.child;
    output = dns.output;
    port = dns.port;
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("transfers a zone of the demo world to the key, refuses it without, and never logs the secret", async () => {
    const at = ["@127.0.0.1", "-p", String(port)];
    const signed = await kdig(["-y", `hmac-sha256:xfr-e2e:${SECRET}`, ...at, "wallet", "AXFR"]);
    expect(signed).toMatch(/^wallet\.\s+3600\s+IN\s+SOA\s/m);
    expect(signed).toMatch(/^alice\.wallet\.\s+300\s+IN\s+CNAME\s+alice\.example\.net\./m);
    expect(signed).not.toMatch(/;; ERROR/);
    expect(await kdig([...at, "wallet", "AXFR"])).toMatch(/REFUSED/);
    // No ICANN TLD is transferred either.
    expect(await kdig(["-y", `hmac-sha256:xfr-e2e:${SECRET}`, ...at, "com", "AXFR"])).toMatch(/NOTAUTH/);
    await new Promise((r) => setTimeout(r, 300));
    expect(output()).toMatch(/zone transfer/);
    expect(output()).not.toContain(SECRET);
    expect(child!.exitCode).toBeNull();
  });
});
