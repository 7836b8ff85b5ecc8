import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DomainWrite } from "../domain/types.js";
import { createScoringRanker } from "../resolution/rank.js";
import { createResolution, type Resolution } from "../resolution/resolution.js";
import { createStore } from "../store/create-store.js";
import type { Store } from "../store/store.js";
import { testDomain, tokenIdOf } from "../../test/helpers/store-world.js";
import { exportZones } from "./zone-export.js";

const NOW = Date.UTC(2025, 0, 1);
const LONG = "a".repeat(64);
const SETTINGS = {
  nameServers: ["ns1.omniname.test", "ns2.omniname.test"],
  hostmaster: "hostmaster.omniname.test",
  now: NOW,
};

/** [name, base score, records, overrides] */
const WORLD: Array<[string, number, Record<string, string>, Partial<DomainWrite>?]> = [
  ["alice.wallet", 80, { "record.A.0": "10.0.0.1", "record.A.ttl": "60", "token.ETH.0": "0xa11ce" }],
  ["alice.wallet", 60, { "record.A.0": "10.9.9.9" }, { provider: "NAMESPACE_B" }],
  ["www.alice.wallet", 50, { "record.CNAME.0": "alice.wallet", "record.A.0": "10.0.0.3" }],
  ["deep.sub.wallet", 50, { "record.TXT.0": 'say "hi" \\ ünï' }],
  ["_svc.wallet", 50, { "record.A.0": "10.0.0.4", "record.TXT.0": "v=1" }],
  [`${LONG}.wallet`, 50, { "record.A.0": "10.0.0.5" }],
  ["expired.wallet", 90, { "record.A.0": "10.0.0.6" }, { expiresAt: NOW - 1 }],
  ["blocked.wallet", 90, { "record.A.0": "10.0.0.7" }, { csamOk: false }],
  [
    "café.eth",
    65,
    { "content.IPFS.0": "QmCafe", "record.MX.0": "10 mx.example.com" },
    { provider: "NAMESPACE_C" },
  ],
  ["bob.x", 50, { "redirect.WEBSITE.0": "https://bob.example", "record.AAAA.0": "2001:db8::1" }],
  // Names under TLDs of the ICANN root: never a zone of ours (docs/dns.md).
  ["acme.com", 50, { "record.A.0": "203.0.113.5" }],
  ["shop.com", 50, { "record.CNAME.0": "shops.example.net" }],
  ["café.рф", 50, { "record.A.0": "203.0.113.6" }],
];

describe("exportZones", () => {
  let dir: string;
  let out: string;
  let store: Store;
  let resolution: Resolution;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-zone-"));
    out = join(dir, "zones");
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    resolution = createResolution({ store: store.domainMap, ranker: createScoringRanker() });
    let n = 1;
    for (const [name, score, records, over] of WORLD) {
      const id = await store.domainMap.upsertDomain(
        testDomain({
          tokenId: tokenIdOf(n++),
          name,
          sld: name.slice(0, name.lastIndexOf(".")),
          tld: name.slice(name.lastIndexOf(".") + 1),
          baseScore: score,
          ...over,
        }),
      );
      await store.domainMap.replaceRecords(
        id,
        Object.entries(records).map(([key, value]) => ({ key, value, nativeKey: key, nativeValue: value })),
      );
    }
    await store.crawlerLog.setCheckpoint({
      sourceId: "fns-polygon",
      chainId: 137,
      blockNumber: 100,
      blockHash: "0x1",
      updatedAt: NOW,
      state: "live",
      error: null,
    });
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes one master file per TLD that named-checkzone and kzonecheck accept", async () => {
    // A page of two domains: the export crosses many pages and still writes each name once.
    const result = await exportZones(store, resolution, { ...SETTINGS, outDir: out, pageSize: 2 });
    expect(result.zones.map((z) => z.tld).sort()).toEqual(["eth", "wallet", "x"]);
    for (const z of result.zones) {
      const bind = spawnSync("named-checkzone", [z.tld, z.file], { encoding: "utf8" });
      expect(bind.stdout + bind.stderr, `named-checkzone ${z.tld}`).toMatch(/OK/);
      expect(bind.status).toBe(0);
      const knot = spawnSync("kzonecheck", ["-o", z.tld, z.file], { encoding: "utf8" });
      expect(knot.stdout + knot.stderr, `kzonecheck ${z.tld}`).not.toMatch(/error/i);
      expect(knot.status).toBe(0);
    }
  });

  it("holds each name's highest-scored domain, CNAME alone, IDNA names, escaped TXT", () => {
    const wallet = readFileSync(join(out, "wallet.zone"), "utf8");
    const body = wallet.split("\n").filter((l) => l.length > 0 && !l.startsWith(";") && !l.startsWith("$"));
    expect(body).toEqual([
      "wallet.\t3600\tIN\tSOA\tns1.omniname.test. hostmaster.omniname.test. 100 3600 900 1209600 300",
      "wallet.\t3600\tIN\tNS\tns1.omniname.test.",
      "wallet.\t3600\tIN\tNS\tns2.omniname.test.",
      // Names in the stored names' byte order ("_" < "a"), each once.
      '_svc.wallet.\t300\tIN\tTXT\t"v=1"',
      "alice.wallet.\t60\tIN\tA\t10.0.0.1",
      'alice.wallet.\t300\tIN\tTXT\t"token.ETH=0xa11ce"',
      'deep.sub.wallet.\t300\tIN\tTXT\t"say \\"hi\\" \\\\ \\195\\188n\\195\\175"',
      "www.alice.wallet.\t300\tIN\tCNAME\talice.wallet.",
    ]);
    expect(readFileSync(join(out, "eth.zone"), "utf8")).toContain(
      'xn--caf-dma.eth.\t300\tIN\tTXT\t"dnslink=/ipfs/QmCafe"',
    );
    const dig = execFileSync("named-checkzone", ["-D", "-o", "-", "x", join(out, "x.zone")], {
      encoding: "utf8",
    });
    expect(dig).toMatch(/bob\.x\.\s+300\s+IN\s+TXT\s+"redirect=https:\/\/bob\.example"/);
  });

  it("never writes a zone for a TLD of the ICANN root, and says how many names it left out", async () => {
    const result = await exportZones(store, resolution, { ...SETTINGS, outDir: join(dir, "icann") });
    expect(result.zones.map((z) => z.tld).sort()).toEqual(["eth", "wallet", "x"]);
    expect(result.icann.sort((a, b) => a.tld.localeCompare(b.tld))).toEqual([
      { tld: "com", domains: 2 },
      { tld: "xn--p1ai", domains: 1 },
    ]);
    expect(existsSync(join(dir, "icann", "com.zone"))).toBe(false);
    expect(existsSync(join(dir, "icann", "xn--p1ai.zone"))).toBe(false);
    const report = readFileSync(join(dir, "icann", "skipped.tsv"), "utf8");
    expect(report).toContain("acme.com\t\tunder the ICANN TLD .com: never served (docs/dns.md)");
    expect(report).toContain("café.рф\t\tunder the ICANN TLD .xn--p1ai");
    // Asked for by name, it is still not written.
    const asked = await exportZones(store, resolution, {
      ...SETTINGS,
      outDir: join(dir, "asked"),
      tlds: ["com"],
    });
    expect(asked.zones).toEqual([]);
    expect(asked.icann).toEqual([{ tld: "com", domains: 2 }]);
    expect(existsSync(join(dir, "asked", "com.zone"))).toBe(false);
  });

  it("uses the operator's ICANN list when given one (a TLD added to the root stops being served)", async () => {
    const r = await exportZones(store, resolution, {
      ...SETTINGS,
      outDir: join(dir, "custom"),
      icannTlds: new Set(["com", "x"]),
    });
    expect(r.zones.map((z) => z.tld).sort()).toEqual(["eth", "wallet", "xn--p1ai"]);
    expect(r.icann.map((z) => z.tld).sort()).toEqual(["com", "x"]);
  });

  it("reports every name and record it leaves out", () => {
    const report = readFileSync(join(out, "skipped.tsv"), "utf8");
    expect(report).toContain(`${LONG}.wallet\t\tlabel of 64 octets (over 63)`);
    expect(report).toContain("www.alice.wallet\trecord.A.0\tbeside a CNAME");
    expect(report).toContain("_svc.wallet\trecord.A.0\tA needs a host name");
  });

  it("keeps the serial growing with the index's progress, never down", async () => {
    const serial = async () =>
      (await exportZones(store, resolution, { ...SETTINGS, outDir: out, tlds: ["x"] })).zones[0].serial;
    expect(await serial()).toBe(100);
    await store.crawlerLog.setCheckpoint({
      sourceId: "fns-polygon",
      chainId: 137,
      blockNumber: 150,
      blockHash: "0x2",
      updatedAt: NOW,
      state: "live",
      error: null,
    });
    expect(await serial()).toBe(150);
    // A reorg rolls the checkpoint back: the serial still moves forward.
    await store.crawlerLog.setCheckpoint({
      sourceId: "fns-polygon",
      chainId: 137,
      blockNumber: 140,
      blockHash: "0x3",
      updatedAt: NOW,
      state: "live",
      error: null,
    });
    expect(await serial()).toBe(151);
    expect(await serial()).toBe(151);
  });

  it("--tld writes only the TLDs asked for, given as Unicode or A-label", async () => {
    const only = join(dir, "only");
    const r = await exportZones(store, resolution, { ...SETTINGS, outDir: only, tlds: ["eth"] });
    expect(r.zones.map((z) => z.tld)).toEqual(["eth"]);
  });
});
