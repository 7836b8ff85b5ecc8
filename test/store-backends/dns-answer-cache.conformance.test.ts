import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnswerCache } from "../../src/dns/answer-cache.js";
import { rankingChangesAt } from "../../src/dns/best-domain.js";
import { buildTestQuery, decodeTestAnswer } from "../../src/dns/dns.testing.js";
import { answerQuery } from "../../src/dns/query-handler.js";
import { createStoreZoneLookup, type StoreZoneLookup } from "../../src/dns/store-zone-lookup.js";
import type { RankedDomain } from "../../src/resolution/rank.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createResolution } from "../../src/resolution/resolution.js";
import { AGE_STEP_MS } from "../../src/scoring/rules/age.rule.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

const NOW = Date.UTC(2026, 0, 1);
let tokens = 5000;

/** The DNS answer cache is exact: every answer it gives is the bytes answerQuery gives at that moment. */
describe.each(STORE_BACKENDS)("DNS answer cache: $name", (backend) => {
  let store: Store;
  let second: Store;
  let cleanup: () => Promise<void>;
  let now = NOW;
  let lookup: StoreZoneLookup;
  let cache: AnswerCache;

  async function register(name: string, records: Record<string, string>, over = {}): Promise<number> {
    const dot = name.lastIndexOf(".");
    const id = await store.domainMap.upsertDomain(
      testDomain({
        tokenId: tokenIdOf(tokens++),
        name,
        sld: name.slice(0, dot),
        tld: name.slice(dot + 1),
        ...over,
      }),
    );
    await setRecords(store, id, records);
    return id;
  }
  async function setRecords(s: Store, id: number, records: Record<string, string>): Promise<void> {
    await s.domainMap.replaceRecords(
      id,
      Object.entries(records).map(([key, value]) => ({ key, value, nativeKey: key, nativeValue: value })),
    );
  }

  /**
   * Waits until the store's read version holds still for 150 ms: on PostgreSQL the change channel
   * also tells this process of its own writes, a moment later, and empties its caches once more.
   */
  async function settle(): Promise<void> {
    let v = store.domainMap.readVersion();
    for (let still = 0; still < 3; ) {
      await new Promise((r) => setTimeout(r, 50));
      const next = store.domainMap.readVersion();
      still = next === v ? still + 1 : 0;
      v = next;
    }
  }

  /** Through the cache as the server does: a hit, else computed and kept. */
  async function viaCache(packet: Buffer): Promise<Buffer | null> {
    return cache.get(packet, "udp") ?? (await cache.answer(packet, "udp"));
  }

  beforeAll(async () => {
    const opened = await backend.open();
    ({ store, cleanup } = opened);
    second = await opened.second();
    await register("alice.cache", { "record.A.0": "192.0.2.1", "record.TXT.0": "hello" });
    await register("bob.cache", { "record.CNAME.0": "alice.cache" });
    await register("carol.cache", { "record.MX.0": "10 mail.example.com", "record.AAAA.0": "2001:db8::1" });
    await register("x.deep.cache", { "record.A.0": "192.0.2.9" });
    await store.crawlerLog.setCheckpoint({
      sourceId: "s",
      chainId: 1,
      blockNumber: 5,
      blockHash: "0x1",
      updatedAt: NOW,
      state: "live",
      error: null,
    });
    lookup = createStoreZoneLookup({
      resolution: createResolution({ store: store.domainMap, ranker: createScoringRanker() }),
      store,
      nameServers: ["ns1.omniname.test", "ns2.omniname.test"],
      hostmaster: "hostmaster.omniname.test",
      clock: () => now,
    });
    await lookup.findZone(".");
    cache = new AnswerCache({ lookup, clock: () => now });
  });
  afterAll(async () => {
    await second.close();
    await cleanup();
  });

  it("gives the bytes answerQuery gives, for every kind of answer, and answers repeats from the cache", async () => {
    const names = [
      "alice.cache",
      "bob.cache",
      "carol.cache",
      "x.deep.cache",
      "deep.cache",
      "nobody.cache",
      "cache",
    ];
    const types = ["A", "AAAA", "TXT", "CNAME", "MX", "SOA", "NS", "ANY", "CAA"];
    const queries: Buffer[] = [];
    let id = 1;
    for (const name of names)
      for (const type of types) {
        queries.push(buildTestQuery(name, type, { id: id++ }));
        queries.push(buildTestQuery(name.toUpperCase(), type, { id: id++, udpSize: 1232 }));
        queries.push(buildTestQuery(name, type, { id: id++, udpSize: 4096 }));
      }
    // A refusal (a TLD that is not ours) goes through the lookup every time: not kept.
    const refused = buildTestQuery("other.tld", "A", { id: id++ });
    queries.push(refused);
    await settle();
    const hitsBefore = cache.hits;
    for (let round = 0; round < 2; round++)
      for (const q of queries) {
        // A different ID and letter case in the second round: both are written into the copy.
        const asked = round === 0 ? q : withIdAndCase(q, 0xbeef);
        expect(await viaCache(asked)).toEqual(await answerQuery(asked, lookup, "udp"));
      }
    // The second round's mixed-case queries share keys with the first's: all of them are hits,
    // but for the refusal.
    expect(cache.hits - hitsBefore).toBe(queries.length - 1);
    expect(cache.get(refused, "udp")).toBeNull();
  });

  it("keeps the query's own 0x20 case and ID in a cached answer", async () => {
    await settle();
    await viaCache(buildTestQuery("alice.cache", "A", { id: 1 }));
    const hit = cache.get(buildTestQuery("AlIcE.CaChE", "A", { id: 777 }), "udp");
    expect(hit).not.toBeNull();
    const decoded = decodeTestAnswer(hit as Buffer);
    expect(decoded.id).toBe(777);
    expect((hit as Buffer).toString("latin1", 13, 18)).toBe("AlIcE");
    expect(decoded.answer).toEqual(["AlIcE.CaChE. 300 IN A 192.0.2.1"]);
  });

  it("a commit of this process is answered at once, never the cached answer", async () => {
    const id = await register("dave.cache", { "record.A.0": "192.0.2.20" });
    await settle();
    const q = buildTestQuery("dave.cache", "A");
    expect(decodeTestAnswer((await viaCache(q)) as Buffer).answer).toEqual([
      "dave.cache. 300 IN A 192.0.2.20",
    ]);
    expect(cache.get(q, "udp")).not.toBeNull();
    await setRecords(store, id, { "record.A.0": "192.0.2.21" });
    expect(cache.get(q, "udp")).toBeNull();
    expect(decodeTestAnswer((await viaCache(q)) as Buffer).answer).toEqual([
      "dave.cache. 300 IN A 192.0.2.21",
    ]);
    // A new name makes its absent answer (NXDOMAIN, cached) give way too.
    const absent = buildTestQuery("erin.cache", "A");
    expect(decodeTestAnswer((await viaCache(absent)) as Buffer).rcode).toBe("NXDOMAIN");
    await register("erin.cache", { "record.A.0": "192.0.2.22" });
    expect(decodeTestAnswer((await viaCache(absent)) as Buffer).answer).toEqual([
      "erin.cache. 300 IN A 192.0.2.22",
    ]);
  });

  it("another process's commit is answered within the store's bound (2 s here)", async () => {
    const id = await register("frank.cache", { "record.A.0": "192.0.2.30" });
    const q = buildTestQuery("frank.cache", "A");
    await viaCache(q);
    await viaCache(q);
    await setRecords(second, id, { "record.A.0": "192.0.2.31" });
    const started = performance.now();
    let answer: string[] = [];
    while (performance.now() - started < 2_000) {
      answer = decodeTestAnswer((await viaCache(q)) as Buffer).answer;
      if (answer[0]?.endsWith("192.0.2.31")) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(answer).toEqual(["frank.cache. 300 IN A 192.0.2.31"]);
  });

  it("an expiry passing by the clock alone ends the cached answer", async () => {
    await register("gina.cache", { "record.A.0": "192.0.2.40" }, { expiresAt: NOW + 60_000 });
    await settle();
    const q = buildTestQuery("gina.cache", "A");
    expect(decodeTestAnswer((await viaCache(q)) as Buffer).rcode).toBe("NOERROR");
    expect(cache.get(q, "udp")).not.toBeNull();
    now = NOW + 60_000;
    try {
      expect(cache.get(q, "udp")).toBeNull();
      expect(decodeTestAnswer((await viaCache(q)) as Buffer).rcode).toBe("NXDOMAIN");
    } finally {
      now = NOW;
    }
  });

  it("never keeps an answer whose lookup failed", async () => {
    let fail = true;
    const failing: StoreZoneLookup = {
      ...lookup,
      findNode: async (...a) => {
        if (fail) throw new Error("store down");
        return lookup.findNode(...a);
      },
    };
    const c = new AnswerCache({ lookup: failing, clock: () => now });
    const q = buildTestQuery("alice.cache", "A");
    expect(decodeTestAnswer((await c.answer(q, "udp")) as Buffer).rcode).toBe("SERVFAIL");
    expect(c.get(q, "udp")).toBeNull();
    fail = false;
    expect(decodeTestAnswer((await c.answer(q, "udp")) as Buffer).rcode).toBe("NOERROR");
    expect(c.get(q, "udp")).not.toBeNull();
  });

  it("keeps at most maxEntries answers, the oldest leaving first", async () => {
    const c = new AnswerCache({ lookup, clock: () => now, maxEntries: 3 });
    for (const n of ["a1", "a2", "a3", "a4"]) await c.answer(buildTestQuery(`${n}.cache`, "A"), "udp");
    expect(c.size).toBe(3);
    expect(c.get(buildTestQuery("a1.cache", "A"), "udp")).toBeNull();
    expect(c.get(buildTestQuery("a4.cache", "A"), "udp")).not.toBeNull();
  });

  it("takes malformed and unusual packets down the full path, never from a key", async () => {
    const q = buildTestQuery("alice.cache", "A");
    const response = Buffer.from(q);
    response[2] |= 0x80; // QR: a response
    const twoQuestions = Buffer.from(q);
    twoQuestions[5] = 2;
    const cut = q.subarray(0, 20);
    for (const p of [response, twoQuestions, cut, Buffer.alloc(0), Buffer.alloc(600)]) {
      expect(cache.get(p, "udp")).toBeNull();
      expect(await cache.answer(p, "udp")).toEqual(await answerQuery(p, lookup, "udp"));
      expect(cache.get(p, "udp")).toBeNull();
    }
  });
});

/** The same query with another ID and its question name's letters in alternating case. */
function withIdAndCase(q: Buffer, id: number): Buffer {
  const out = Buffer.from(q);
  out.writeUInt16BE(id, 0);
  let off = 12;
  let upper = true;
  while (out[off] !== 0) {
    for (let i = off + 1; i <= off + out[off]; i++) {
      const c = out[i];
      if (c >= 0x61 && c <= 0x7a && upper) out[i] = c & ~0x20;
      upper = !upper;
    }
    off += 1 + out[off];
  }
  return out;
}

describe("rankingChangesAt", () => {
  const ranked = (d: Partial<RankedDomain["domain"]>) => ({ domain: d }) as RankedDomain;
  it("is the first expiry or age step ahead, never one that is past", () => {
    const reg = NOW - 10 * AGE_STEP_MS - 5;
    expect(rankingChangesAt([ranked({ expiresAt: null, registeredAt: reg })], NOW)).toBe(
      Number.POSITIVE_INFINITY,
    );
    const young = NOW - AGE_STEP_MS / 2;
    expect(rankingChangesAt([ranked({ expiresAt: null, registeredAt: young })], NOW)).toBe(
      young + AGE_STEP_MS,
    );
    expect(
      rankingChangesAt(
        [
          ranked({ expiresAt: NOW + 1000, registeredAt: reg }),
          ranked({ expiresAt: NOW - 1, registeredAt: null }),
        ],
        NOW,
      ),
    ).toBe(NOW + 1000);
    expect(rankingChangesAt([ranked({ expiresAt: null, registeredAt: NOW + 50 })], NOW)).toBe(NOW + 51);
  });
});
