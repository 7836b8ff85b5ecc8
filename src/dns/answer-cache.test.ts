import { describe, expect, it } from "vitest";
import { AnswerCache, queryHash } from "./answer-cache.js";
import { buildTestQuery } from "./dns.testing.js";
import { answerQuery } from "./query-handler.js";
import { createStaticZoneLookup } from "./static-zone-lookup.js";

/** Names of 12 pseudo-random letters (a fixed sequence): hashes of unrelated names, as a birthday search needs. */
function* randomNames(): Generator<string> {
  let x = 12345;
  for (;;) {
    let label = "";
    for (let i = 0; i < 12; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      label += String.fromCharCode(0x61 + ((x >>> 16) % 26));
    }
    yield `${label}.wallet`;
  }
}
const lookup = createStaticZoneLookup(
  { wallet: { "alice.wallet": { "record.A.0": "10.0.0.1", "record.TXT.0": "hi" } } },
  { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 7 },
);

/** Two names whose A queries (same ID, same options) have the same key hash: found by trying. */
function collidingNames(): [string, string] {
  const seen = new Map<number, string>();
  // 2^32 hashes: among 400,000 names some 18 pairs are expected to share one.
  let n = 0;
  for (const name of randomNames()) {
    if (++n > 400_000) break;
    const h = queryHash(buildTestQuery(name, "A"), "udp") as number;
    const other = seen.get(h);
    if (other !== undefined) return [other, name];
    seen.set(h, name);
  }
  throw new Error("no two names of one hash");
}

/** The keyed answer cache: a hit is the computed answer's bytes, never another query's. */
describe("AnswerCache keys", () => {
  it("two queries of one hash share its slot: each gets its own answer or none, never the other's", async () => {
    const [a, b] = collidingNames();
    expect(a).not.toBe(b);
    const cache = new AnswerCache({ lookup, clock: () => 0 });
    const qa = buildTestQuery(a, "A", { id: 1 });
    const qb = buildTestQuery(b, "A", { id: 2 });
    await cache.answer(qa, "udp");
    expect(cache.get(qa, "udp")).toEqual(await answerQuery(qa, lookup, "udp"));
    // b is not a hit on a's entry, and once computed it takes the slot: a is computed again.
    expect(cache.get(qb, "udp")).toBeNull();
    await cache.answer(qb, "udp");
    expect(cache.size).toBe(1);
    expect(cache.get(qb, "udp")).toEqual(await answerQuery(qb, lookup, "udp"));
    expect(cache.get(qa, "udp")).toBeNull();
  });

  it("keeps a query apart by transport, by EDNS (DO, UDP size) and by type; the name's case and the ID are left out", async () => {
    const cache = new AnswerCache({ lookup, clock: () => 0 });
    const variants = [
      buildTestQuery("alice.wallet", "A"),
      buildTestQuery("alice.wallet", "TXT"),
      buildTestQuery("alice.wallet", "A", { udpSize: 1232 }),
      buildTestQuery("alice.wallet", "A", { udpSize: 4096 }),
      buildTestQuery("alice.wallet", "A", { udpSize: 1232, dnssecOk: true }),
    ];
    for (const q of variants) await cache.answer(q, "udp");
    await cache.answer(variants[0], "tcp");
    expect(cache.size).toBe(variants.length + 1);
    for (const q of variants) {
      const other = Buffer.from(q);
      other.writeUInt16BE(0xbeef, 0);
      other.write("AlIcE", 13, "latin1");
      const hit = cache.get(other, "udp") as Buffer;
      expect(hit).toEqual(await answerQuery(other, lookup, "udp"));
      expect(hit.readUInt16BE(0)).toBe(0xbeef);
      expect(hit.toString("latin1", 13, 18)).toBe("AlIcE");
    }
    expect(queryHash(variants[0], "udp")).not.toBe(queryHash(variants[0], "tcp"));
    expect(queryHash(variants[0].subarray(0, 20), "udp")).toBeNull();
  });
});
