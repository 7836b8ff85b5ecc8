import { type ChildProcess, execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childrenOf, isAlive } from "../helpers/processes.js";
import { startDnsRoleProcess } from "../helpers/server-process.js";

const run = promisify(execFile);

describe("omniname start with OMNINAME_ROLES=dns", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-dns-role-"));
  let child: ChildProcess | null = null;
  let host = "";
  let port = 0;

  beforeAll(async () => {
    const dns = await startDnsRoleProcess(dataDir);
    child = dns.child;
    host = dns.host;
    port = dns.port;
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const workers = childrenOf(child.pid!, "dns-worker");
      const exited = new Promise((r) => child!.once("exit", r));
      child.kill("SIGTERM");
      // A graceful stop: exit 0, and the workers stopped before the primary.
      expect(await exited).toBe(0);
      expect(workers.filter(isAlive)).toEqual([]);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("prints its address in the banner and answers dig over UDP and kdig over TCP", async () => {
    expect(host).toBe("127.0.0.1");
    const udp = await run("dig", [`@${host}`, "-p", String(port), "+norec", "alice.wallet", "TXT"]);
    expect(udp.stdout).toMatch(/status: NOERROR/);
    expect(udp.stdout).toMatch(/flags: qr aa;/);
    // The fixture's alice.wallet has a CNAME: it stands alone, whatever type is asked.
    expect(udp.stdout).toMatch(/alice\.wallet\.\s+300\s+IN\s+CNAME\s+alice\.example\.net\./);
    const tcp = await run("kdig", [`@${host}`, "-p", String(port), "+tcp", "wallet", "SOA"]);
    expect(tcp.stdout).toMatch(/wallet\.\s+3600\s+IN\s+SOA\s+ns1\.omniname\.test\./);
  });

  it("runs the dns role in one worker process per core by default (DNS_WORKERS=0)", () => {
    expect(childrenOf(child!.pid!, "dns-worker")).toHaveLength(availableParallelism());
  });

  it("never answers for an ICANN TLD, though the demo world holds acme.com and shop.com", async () => {
    for (const [name, type] of [
      ["www.example.com", "A"],
      ["acme.com", "A"],
      ["shop.com", "CNAME"],
      ["com", "SOA"],
      ["example.org", "A"],
    ]) {
      const udp = await run("kdig", [`@${host}`, "-p", String(port), "+norec", name, type]);
      expect(udp.stdout, `${name} ${type}`).toMatch(/status: REFUSED/);
      expect(udp.stdout, `${name} ${type}`).not.toMatch(/AUTHORITY SECTION/);
    }
  });
});
