import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScoringRanker } from "../resolution/rank.js";
import { createResolution, type Resolution } from "../resolution/resolution.js";
import { createStore } from "../store/create-store.js";
import type { Store } from "../store/store.js";
import { testDomain, tokenIdOf } from "../../test/helpers/store-world.js";
import { generateDnssecKeyPem, parseDnssecKeys } from "./dnssec-keys.js";
import { exportZones } from "./zone-export.js";

// Signatures are checked against the clock of the tools: the export signs at the real time.
const NOW = Date.now();
const KEYS = parseDnssecKeys(generateDnssecKeyPem(), "test");
const TWO_KEYS = parseDnssecKeys(`${generateDnssecKeyPem()}\n${generateDnssecKeyPem()}`, "test");
const SETTINGS = {
  nameServers: ["ns1.omniname.test", "NS2.omniname.test"],
  hostmaster: "hostmaster.omniname.test",
  now: NOW,
};

const WORLD: Array<[string, Record<string, string>]> = [
  [
    "alice.wallet",
    {
      "record.A.0": "10.0.0.1",
      "record.A.ttl": "60",
      "token.ETH.0": "0xa11ce",
      "record.MX.0": "10 mx.alice.wallet",
    },
  ],
  ["www.alice.wallet", { "record.CNAME.0": "alice.wallet" }],
  ["deep.sub.wallet", { "record.TXT.0": 'say "hi" \\ ünï' }],
  ["_svc.wallet", { "record.TXT.0": "v=1" }],
  ["b.wallet", { "record.AAAA.0": "2001:db8::1" }],
  ["café.wallet", { "content.IPFS.0": "QmCafe" }],
  ["empty.wallet", {}],
  ["bob.x", { "record.A.0": "10.0.0.2" }],
];

function check(tool: string, args: string[]): { status: number | null; text: string } {
  const r = spawnSync(tool, args, { encoding: "utf8" });
  return { status: r.status, text: `${r.stdout}${r.stderr}` };
}

describe("signed zone export (DNSSEC=on)", () => {
  let dir: string;
  let store: Store;
  let resolution: Resolution;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-signed-zone-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    resolution = createResolution({ store: store.domainMap, ranker: createScoringRanker() });
    let n = 1;
    for (const [name, records] of WORLD) {
      const dot = name.lastIndexOf(".");
      const id = await store.domainMap.upsertDomain(
        testDomain({ tokenId: tokenIdOf(n++), name, sld: name.slice(0, dot), tld: name.slice(dot + 1) }),
      );
      await store.domainMap.replaceRecords(
        id,
        Object.entries(records).map(([key, value]) => ({ key, value, nativeKey: key, nativeValue: value })),
      );
    }
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("kzonecheck --dnssec on, named-checkzone and dnssec-verify accept every zone", async () => {
    const out = join(dir, "zones-1");
    const result = await exportZones(store, resolution, {
      ...SETTINGS,
      outDir: out,
      pageSize: 2,
      dnssec: KEYS,
    });
    expect(result.zones.map((z) => z.tld).sort()).toEqual(["wallet", "x"]);
    for (const z of result.zones) {
      const knot = check("kzonecheck", ["--dnssec", "on", "-o", z.tld, z.file]);
      expect(knot.text, `kzonecheck ${z.tld}`).not.toMatch(/error|missing|invalid/i);
      expect(knot.status).toBe(0);
      const bind = check("named-checkzone", [z.tld, z.file]);
      expect(bind.text, `named-checkzone ${z.tld}`).toMatch(/OK/);
      // -z: every RRset signed by a key with the SEP flag (one combined key, no ZSK).
      const verify = check("dnssec-verify", ["-z", "-o", z.tld, z.file]);
      expect(verify.text, `dnssec-verify ${z.tld}`).toMatch(/Zone fully signed/);
      expect(verify.status).toBe(0);
    }
  });

  it("with two keys (a rollover) every RRset is signed by each, and dnssec-verify accepts the zone", async () => {
    const out = join(dir, "zones-2");
    const result = await exportZones(store, resolution, { ...SETTINGS, outDir: out, dnssec: TWO_KEYS });
    const file = result.zones.find((z) => z.tld === "wallet")!.file;
    const one = readFileSync(join(dir, "zones-1", "wallet.zone"), "utf8");
    const two = readFileSync(file, "utf8");
    expect(two.match(/\tRRSIG\t/g)!.length).toBe(2 * one.match(/\tRRSIG\t/g)!.length);
    expect(two.match(/\tDNSKEY\t/g)!.length).toBe(2);
    const verify = check("dnssec-verify", ["-z", "-o", "wallet", file]);
    expect(verify.text).toMatch(/KSKs: 2 active/);
    expect(verify.status).toBe(0);
    expect(check("named-checkzone", ["wallet", file]).text).toMatch(/OK/);
    // Not kzonecheck: version 3.2 rejects every zone with two keys of one algorithm, one signed by
    // BIND's dnssec-signzone included ("no valid signature for a record").
  });

  it("holds the DNSKEY, an RRSIG per RRset and an NSEC chain in canonical order", () => {
    const zone = readFileSync(join(dir, "zones-1", "wallet.zone"), "utf8");
    const nsec = zone
      .split("\n")
      .filter((l) => /\tNSEC\t/.test(l))
      .map((l) => l.split("\t").slice(0, 1).concat(l.split("\t")[4]).join(" "));
    expect(nsec).toEqual([
      "wallet. _svc.wallet. NS SOA RRSIG NSEC DNSKEY",
      "_svc.wallet. alice.wallet. TXT RRSIG NSEC",
      "alice.wallet. www.alice.wallet. A MX TXT RRSIG NSEC",
      "www.alice.wallet. b.wallet. CNAME RRSIG NSEC",
      "b.wallet. deep.sub.wallet. AAAA RRSIG NSEC",
      "deep.sub.wallet. xn--caf-dma.wallet. TXT RRSIG NSEC",
      "xn--caf-dma.wallet. wallet. TXT RRSIG NSEC",
    ]);
    expect(zone).toMatch(/^wallet\.\t3600\tIN\tDNSKEY\t257 3 13 /m);
    expect(zone.match(/\tRRSIG\t/g)?.length).toBe(3 + 8 + nsec.length);
  });
});
