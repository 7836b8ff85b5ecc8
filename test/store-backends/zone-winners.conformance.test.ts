import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dnsRankContext, findBestDomain } from "../../src/dns/best-domain.js";
import { buildDnsName } from "../../src/dns/dns-name.js";
import { exportZones } from "../../src/dns/zone-export.js";
import { createZoneWinners } from "../../src/dns/zone-winners.js";
import type { Network } from "../../src/domain/networks.js";
import type { Provider } from "../../src/domain/providers.js";
import type { DomainWithRecords } from "../../src/domain/types.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createResolution } from "../../src/resolution/resolution.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

const NOW = Date.UTC(2025, 0, 1);
const DAY = 86_400_000;
const PAIRS: Array<[Provider, Network]> = [
  ["NAMESPACE_A", "POLYGON"],
  ["NAMESPACE_A", "BSC"],
  ["NAMESPACE_B", "ETHEREUM"],
  ["NAMESPACE_B", "POLYGON"],
  ["NAMESPACE_C", "ETHEREUM"],
];
/** Names beside the generated ones: other stored forms of one DNS name, refused and odd names. */
const SPECIAL = [
  "café.eth",
  "xn--caf-dma.eth",
  "ａｂｃ.eth",
  "abc.eth",
  "ⅷ.eth",
  "viii.eth",
  "ǅ.eth",
  "$x.eth",
  "_svc.wallet",
  "ALICE.wallet",
  "alice.wallet",
  "a.b.alice.wallet",
];

/** A small deterministic generator (mulberry32): the same world on both backends. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Collisions of 1–5 domains across providers and networks; ties, expired, CSAM-failing, spam. */
async function seedWorld(store: Store): Promise<void> {
  const rnd = random(20);
  const names = [...SPECIAL];
  for (let i = 0; i < 120; i++)
    names.push(`n${Math.floor(rnd() * 60)}.${["wallet", "crypto", "x", "eth"][i % 4]}`);
  let token = 1;
  for (const name of new Set(names)) {
    const copies = 1 + Math.floor(rnd() * PAIRS.length);
    const start = Math.floor(rnd() * PAIRS.length);
    for (let c = 0; c < copies; c++) {
      const [provider, network] = PAIRS[(start + c) % PAIRS.length];
      const dot = name.indexOf(".");
      const roll = rnd();
      const id = await store.domainMap.upsertDomain(
        testDomain({
          tokenId: tokenIdOf(token++),
          provider,
          network,
          name,
          sld: name.slice(0, dot),
          tld: name.slice(name.lastIndexOf(".") + 1),
          // Few distinct scores and dates: equal scores and equal registrations are common.
          baseScore: [40, 50, 50, 60, 100][Math.floor(rnd() * 5)],
          registeredAt: rnd() < 0.1 ? null : NOW - [400, 400, 30, 1][Math.floor(rnd() * 4)] * DAY,
          expiresAt: roll < 0.15 ? NOW - DAY : roll < 0.3 ? NOW + DAY : null,
          csamOk: rnd() >= 0.1,
          spam: rnd() < 0.1,
        }),
      );
      // A TXT record too: every served name has a line (`_svc` may own no A record).
      await store.domainMap.replaceRecords(id, [
        { key: "record.A.0", value: `10.0.${token >> 8}.${token & 255}`, nativeKey: "a", nativeValue: "a" },
        { key: "record.TXT.0", value: `${token}`, nativeKey: "t", nativeValue: "t" },
      ]);
    }
  }
}

/** Every name's domains as `iterateDomainsByName` gives them, checking that no name is split. */
async function groupsByName(
  store: Store,
  pageSize: number,
  opts?: Parameters<Store["domainMap"]["iterateDomainsByName"]>[1],
): Promise<DomainWithRecords[][]> {
  const groups: DomainWithRecords[][] = [];
  let last: string | null = null;
  for await (const page of store.domainMap.iterateDomainsByName(pageSize, opts)) {
    expect(page.length).toBeGreaterThan(0);
    for (const d of page) {
      if (d.name === last) {
        const group = groups[groups.length - 1];
        expect(page.includes(group[0]), `${d.name} split across pages`).toBe(true);
        expect(d.id).toBeGreaterThan(group[group.length - 1].id);
        group.push(d);
      } else {
        if (last !== null) expect(d.name > last, `${d.name} after ${last}`).toBe(true);
        groups.push([d]);
        last = d.name;
      }
    }
  }
  return groups;
}

describe.each(STORE_BACKENDS)("zone export's winners: $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  const settings: Record<string, Record<string, unknown>> = {};

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    await seedWorld(store);
    const rules: Record<string, Record<string, unknown>> = {
      priority: { providerPriority: ["NAMESPACE_C", "NAMESPACE_B"], networks: { disabled: ["BSC"] } },
      expired: {
        includeExpired: true,
        providers: { disabled: ["NAMESPACE_A"] },
        exceptions: [
          { tld: "crypto", provider: "NAMESPACE_B" },
          { domain: "abc.eth", provider: "NAMESPACE_C" },
        ],
      },
    };
    settings.public = {};
    for (const [name, value] of Object.entries(rules)) {
      const p = await store.projects.createProject({ name });
      await store.projects.updateProjectSettings(p.id, value);
      settings[name] = (await store.projects.findProjectByName(name))!.settings;
    }
  }, 60_000);
  afterAll(async () => {
    await cleanup();
  });

  it("reads every domain once, in name order, pages never splitting a name", async () => {
    const total = await store.domainMap.countDomains();
    for (const size of [1, 2, 3, 1000]) {
      const groups = await groupsByName(store, size);
      expect(groups.flat().length, `page size ${size}`).toBe(total);
      expect(new Set(groups.flat().map((d) => d.id)).size).toBe(total);
      expect(groups.flat().every((d) => d.records.length === 2)).toBe(true);
    }
  });

  it.each(["public", "priority", "expired"])(
    "picks findBestDomain's domain for every DNS name (%s settings)",
    async (which) => {
      const ranker = createScoringRanker();
      const resolution = createResolution({ store: store.domainMap, ranker });
      const ctx = dnsRankContext(settings[which], NOW);
      const winners = createZoneWinners({ ranker, resolution, ctx });
      const groups = await groupsByName(store, 3);

      const expected = new Map<string, number>();
      for (const group of groups) {
        const dns = buildDnsName(group[0].name);
        if (!dns.ok || expected.has(dns.name)) continue;
        const best = await findBestDomain(resolution, dns.name, ctx);
        if (best !== null) expected.set(dns.name, best.domain.id);
      }
      const picked = new Map<string, number>();
      for (const group of groups) {
        const dns = buildDnsName(group[0].name);
        if (!dns.ok) continue;
        const w = await winners.pick(group, dns.name);
        if (w === null) continue;
        expect(picked.has(dns.name), `${dns.name} picked twice`).toBe(false);
        picked.set(dns.name, w.id);
      }
      expect(picked).toEqual(expected);
      // The world has names with no servable domain and names won by lower base scores.
      expect(expected.size).toBeGreaterThan(30);
      expect(expected.size).toBeLessThan(new Set(groups.map((g) => buildDnsName(g[0].name))).size);
    },
  );

  it("exports exactly those winners, each name once (project settings applied)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "omniname-zone-winners-"));
    try {
      const ranker = createScoringRanker();
      const resolution = createResolution({ store: store.domainMap, ranker });
      const ctx = dnsRankContext(settings.priority, NOW);
      const result = await exportZones(store, resolution, {
        outDir: dir,
        nameServers: ["ns1.omniname.test"],
        hostmaster: "hostmaster.omniname.test",
        now: NOW,
        projectSettings: settings.priority,
        ranker,
        pageSize: 4,
      });
      const owners: string[] = [];
      for (const file of readdirSync(dir).filter((f) => f.endsWith(".zone"))) {
        const zone = file.slice(0, -".zone".length);
        for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
          if (line === "" || line.startsWith(";") || line.startsWith("$")) continue;
          const owner = line.slice(0, line.indexOf("\t") - 1);
          if (owner !== zone && owners[owners.length - 1] !== owner) owners.push(owner);
        }
      }
      const expected: string[] = [];
      for (const group of await groupsByName(store, 1000)) {
        const dns = buildDnsName(group[0].name);
        if (!dns.ok || expected.includes(dns.name)) continue;
        const best = await findBestDomain(resolution, dns.name, ctx);
        if (best !== null) expected.push(dns.name);
      }
      expect(owners.sort()).toEqual(expected.sort());
      expect(result.zones.reduce((n, z) => n + z.names, 0)).toBe(expected.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Last: it adds domains. The scan reads each domain's records in one statement (as JSON on
  // both backends): values JSON must escape, and a domain without records, come back exactly.
  it("reads every domain and its records exactly as findDomainsByName does", async () => {
    const hostile = ['q"uote\\back\u0001ctl', "tab\tline\n\r", "é漢字🙂", "]}[{,", ""];
    const a = await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(9001), name: "zz-hostile.x", sld: "zz-hostile", tld: "x" }),
    );
    await store.domainMap.replaceRecords(
      a,
      hostile.map((v, i) => ({ key: `record.TXT.${i}`, value: v, nativeKey: v, nativeValue: `${v}!` })),
    );
    await store.domainMap.upsertDomain(
      testDomain({
        tokenId: tokenIdOf(9002),
        name: "zz-hostile.x",
        sld: "zz-hostile",
        tld: "x",
        tags: ["a-tag", 'q"t'],
        resolver: "0x00000000000000000000000000000000000000aa",
      }),
    );
    // Read ahead (SQLite: on a worker thread, as the zone export reads) gives the same pages.
    for (const readAhead of [false, true])
      for (const size of [1, 7]) {
        const groups = await groupsByName(store, size, { readAhead });
        expect(groups.flat().length).toBe(await store.domainMap.countDomains());
        for (const group of groups)
          expect(group, group[0].name).toEqual(await store.domainMap.findDomainsByName([group[0].name], {}));
        const read = groups.find((g) => g[0].name === "zz-hostile.x")!;
        expect(read.map((d) => d.records.length)).toEqual([hostile.length, 0]);
        expect(read[0].records.map((r) => r.value).sort()).toEqual([...hostile].sort());
        expect(read[1].tags).toEqual(["a-tag", 'q"t']);
      }
  });

  it("reads only the records of the prefixes asked for, the same with and without read-ahead", async () => {
    const id = await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(9003), name: "zz-keys.x", sld: "zz-keys", tld: "x" }),
    );
    const keys = [
      "content.IPFS.0",
      "crypto.ETH.address",
      "record.A.0",
      "recordX.A.0",
      "RECORD.A.1",
      "token.ETH.0",
    ];
    await store.domainMap.replaceRecords(
      id,
      keys.map((key) => ({ key, value: "v", nativeKey: key, nativeValue: "v" })),
    );
    const want = ["content.IPFS.0", "record.A.0", "token.ETH.0"];
    for (const readAhead of [false, true]) {
      const groups = await groupsByName(store, 5, {
        recordKeys: ["content.", "record.", "token."],
        readAhead,
      });
      expect(groups.flat().length).toBe(await store.domainMap.countDomains());
      const read = groups.find((g) => g[0].name === "zz-keys.x")!;
      expect(read[0].records.map((r) => r.key)).toEqual(want);
      const all = await store.domainMap.findDomainsByName(["zz-keys.x"], {});
      expect(read[0]).toEqual({ ...all[0], records: all[0].records.filter((r) => want.includes(r.key)) });
    }
    await expect(
      (async () => {
        for await (const _ of store.domainMap.iterateDomainsByName(5, { recordKeys: ["record.%"] }));
      })(),
    ).rejects.toThrow(/a-z, 0-9 and \. only/);
  });

  it("a scan stopped early ends its reader (SQLite: the worker thread)", async () => {
    for await (const page of store.domainMap.iterateDomainsByName(2, { readAhead: true })) {
      expect(page.length).toBeGreaterThan(0);
      break;
    }
    const groups = await groupsByName(store, 3, { readAhead: true });
    expect(groups.flat().length).toBe(await store.domainMap.countDomains());
  });
});
