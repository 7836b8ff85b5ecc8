import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsServer, type DnsServer } from "../../src/dns/dns-server.js";
import { type DnssecKeys, generateDnssecKeyPem, parseDnssecKeys } from "../../src/dns/dnssec-keys.js";
import { DnssecSigner } from "../../src/dns/dnssec-sign.js";
import { createStaticZoneLookup } from "../../src/dns/static-zone-lookup.js";

const run = promisify(execFile);

const NAMES = {
  "alice.wallet": { "record.A.0": "10.0.0.1", "record.TXT.0": "hello", "record.MX.0": "10 mx.alice.wallet" },
  "www.alice.wallet": { "record.CNAME.0": "alice.wallet" },
  "deep.under.wallet": { "record.AAAA.0": "2001:db8::9" },
  "big.wallet": Object.fromEntries(
    Array.from({ length: 12 }, (_, i) => [`record.TXT.${i}`, `${i}`.padEnd(80, "y")]),
  ),
};

/** A server of the `wallet` zone signed with these keys. */
async function serve(keys: DnssecKeys): Promise<DnsServer> {
  const lookup = createStaticZoneLookup(
    { wallet: NAMES },
    { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 3 },
  );
  lookup.dnssec = new DnssecSigner(keys, Date.now);
  return createDnsServer({ lookup, host: "127.0.0.1", port: 0, tcpIdleMs: 5_000, tcpMaxClients: 16 });
}

/** A trust-anchors file (delv -a) holding these keys for `wallet.`. */
function anchorFile(dir: string, name: string, keys: DnssecKeys["keys"]): string {
  const file = join(dir, name);
  const lines = keys.map(
    (k) => `  wallet. static-key 257 3 13 "${k.dnskey.subarray(4).toString("base64")}";`,
  );
  writeFileSync(file, `trust-anchors {\n${lines.join("\n")}\n};\n`);
  return file;
}

async function delv(port: number, anchor: string, ...query: string[]): Promise<string> {
  // +root=wallet: the validation starts at our zone, not at the (absent) root.
  const args = ["@127.0.0.1", "-p", String(port), "-a", anchor, "+root=wallet", ...query];
  try {
    const { stdout, stderr } = await run("delv", args, { timeout: 20_000 });
    return stdout + stderr;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return `${err.stdout ?? ""}${err.stderr ?? ""}`;
  }
}

async function dig(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("dig", [
    "@127.0.0.1",
    "-p",
    String(port),
    "+norecurse",
    "+time=3",
    "+tries=1",
    ...args,
  ]);
  return stdout;
}

describe("DNSSEC judged by delv (BIND 9.18) and dig", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-dnssec-"));
  const keys = parseDnssecKeys(generateDnssecKeyPem(), "test");
  const stranger = parseDnssecKeys(generateDnssecKeyPem(), "stranger");
  let server: DnsServer;
  let anchor: string;

  beforeAll(async () => {
    server = await serve(keys);
    anchor = anchorFile(dir, "anchor", keys.keys);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ["a positive answer", ["alice.wallet", "A"], /alice\.wallet\.\s+300\s+IN\s+A\s+10\.0\.0\.1/],
    ["TXT", ["alice.wallet", "TXT"], /"hello"/],
    ["MX", ["alice.wallet", "MX"], /MX\s+10 mx\.alice\.wallet\./],
    [
      "a CNAME followed in the zone",
      ["www.alice.wallet", "A"],
      /CNAME\s+alice\.wallet\.[\s\S]+A\s+10\.0\.0\.1/,
    ],
    ["the apex SOA", ["wallet.", "SOA"], /SOA\s+ns1\.omniname\.test\./],
    ["the apex NS", ["wallet.", "NS"], /NS\s+ns1\.omniname\.test\./],
    ["the DNSKEY RRset", ["wallet.", "DNSKEY"], /DNSKEY\s+257 3 13/],
    ["an answer over TCP", ["+tcp", "deep.under.wallet", "AAAA"], /AAAA\s+2001:db8::9/],
    ["a large RRset (UDP truncated, then TCP)", ["big.wallet", "TXT"], /TXT\s+"11y/],
  ])("%s: fully validated", async (_label, query, data) => {
    const out = await delv(server.port, anchor, ...query);
    expect(out).toMatch(/^; fully validated$/m);
    expect(out).toMatch(data);
  });

  it.each([
    [
      "NXDOMAIN (compact denial: NXNAME)",
      ["nope.wallet", "A"],
      /NSEC\s+\\000\.nope\.wallet\. RRSIG NSEC TYPE128/,
    ],
    ["NODATA at a name", ["alice.wallet", "AAAA"], /NSEC\s+\\000\.alice\.wallet\. A MX TXT RRSIG NSEC/],
    ["NODATA at an empty non-terminal", ["under.wallet", "A"], /NSEC\s+\\000\.under\.wallet\. RRSIG NSEC$/m],
    ["NODATA at the apex", ["wallet.", "TXT"], /NSEC\s+\\000\.wallet\. NS SOA RRSIG NSEC DNSKEY/],
    ["a name below a missing one", ["a.b.c.nope.wallet", "TXT"], /TYPE128/],
  ])("%s: negative response, fully validated", async (_label, query, nsec) => {
    const out = await delv(server.port, anchor, ...query);
    expect(out).toMatch(/^; negative response, fully validated$/m);
    expect(out).toMatch(nsec);
  });

  it("a trust anchor of another key: no answer validates", async () => {
    const out = await delv(server.port, anchorFile(dir, "stranger", stranger.keys), "alice.wallet", "A");
    expect(out).not.toMatch(/fully validated/);
    expect(out).toMatch(/resolution failed|validation failure|no valid/i);
  });

  it("a rollover: with two keys published (both signing), an anchor of either key validates", async () => {
    const both = parseDnssecKeys(`${generateDnssecKeyPem()}\n${generateDnssecKeyPem()}`, "rollover");
    const rolling = await serve(both);
    try {
      for (const [i, key] of both.keys.entries()) {
        const a = anchorFile(dir, `key-${i}`, [key]);
        expect(await delv(rolling.port, a, "alice.wallet", "A")).toMatch(/^; fully validated$/m);
        expect(await delv(rolling.port, a, "nope.wallet", "A")).toMatch(
          /^; negative response, fully validated$/m,
        );
      }
    } finally {
      await rolling.close();
    }
  });

  it("dig +dnssec: signed answers to DO only; NXDOMAIN without DO, NOERROR with it", async () => {
    const plain = await dig(server.port, "alice.wallet", "A");
    expect(plain).not.toMatch(/RRSIG/);
    expect(await dig(server.port, "+dnssec", "alice.wallet", "A")).toMatch(/IN\s+RRSIG\s+A 13 2 300 /);
    expect(await dig(server.port, "nope.wallet", "A")).toMatch(/status: NXDOMAIN/);
    expect(await dig(server.port, "+dnssec", "nope.wallet", "A")).toMatch(/status: NOERROR/);
  });

  it("dig +dnssec with a 512-byte buffer: TC over UDP, the signed answer over TCP", async () => {
    const udp = await dig(server.port, "+dnssec", "+bufsize=512", "+ignore", "big.wallet", "TXT");
    expect(udp).toMatch(/flags: qr aa tc;/);
    expect(udp).toMatch(/ANSWER: 0,/);
    const tcp = await dig(server.port, "+dnssec", "+tcp", "big.wallet", "TXT");
    expect(tcp).toMatch(/ANSWER: 13,/);
  });

  it.each([
    [
      "an unknown type",
      "TYPE65280",
      /status: NOERROR[\s\S]+ANSWER: 0,[\s\S]+IN\s+NSEC\s+\\000\.alice\.wallet\./,
    ],
    ["type RRSIG", "RRSIG", /status: NOERROR[\s\S]+ANSWER: 0,[\s\S]+IN\s+NSEC\s/],
    ["type NSEC", "NSEC", /ANSWER: 2,[\s\S]+IN\s+NSEC\s+\\000\.alice\.wallet\. A MX TXT RRSIG NSEC/],
    ["type DS below the apex", "DS", /status: NOERROR[\s\S]+ANSWER: 0,/],
    ["type NSEC3PARAM", "NSEC3PARAM", /status: NOERROR[\s\S]+ANSWER: 0,/],
  ])("dig +dnssec for %s: a signed answer, never an error", async (_label, type, expected) => {
    expect(await dig(server.port, "+dnssec", "alice.wallet", type)).toMatch(expected);
  });

  it("EDNS version 1 with DO: BADVERS, unsigned", async () => {
    const out = await dig(server.port, "+dnssec", "+edns=1", "+noednsneg", "alice.wallet", "A");
    expect(out).toMatch(/status: BADVERS/);
    expect(out).not.toMatch(/RRSIG/);
  });
});
