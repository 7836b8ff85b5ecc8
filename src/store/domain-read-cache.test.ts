import { describe, expect, it } from "vitest";
import type { DomainWithRecords } from "../domain/types.js";
import { DomainReadCache, frozenEntry, type NameEntry } from "./domain-read-cache.js";

function domain(name: string, recordBytes = 10): DomainWithRecords {
  return {
    id: 1,
    provider: "NAMESPACE_A",
    network: "POLYGON",
    tokenId: "0x01",
    name,
    sld: name.split(".")[0],
    tld: "x",
    owner: "0xowner",
    contractAddress: "0xcontract",
    resolver: null,
    registeredAt: null,
    registeredBlock: null,
    expiresAt: null,
    lastUpdateBlock: 0,
    lastUpdateAt: 0,
    baseScore: 50,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
    records: [{ key: "record.TXT.0", value: "v".repeat(recordBytes), nativeKey: "k", nativeValue: "v" }],
  };
}

const entry = (name: string, recordBytes?: number): NameEntry => frozenEntry([domain(name, recordBytes)]);

describe("DomainReadCache", () => {
  it("keeps at most `limit` entries a map, the least recently used leaving first", () => {
    const cache = new DomainReadCache(2);
    cache.remember(cache.byName, "a.x", () => entry("a.x"));
    cache.remember(cache.byName, "b.x", () => entry("b.x"));
    cache.remember(cache.byName, "a.x", () => entry("never")); // a hit: a.x is now the most recent
    cache.remember(cache.byName, "c.x", () => entry("c.x"));
    expect([...cache.byName.keys()]).toEqual(["a.x", "c.x"]);
  });

  it("keeps the estimated bytes of all maps under its bound, and counts what it drops", () => {
    const one = new DomainReadCache(1000, 1 << 30);
    one.remember(one.byName, "a.x", () => entry("a.x", 1000));
    const size = one.heldBytes;
    expect(size).toBeGreaterThan(2000); // the record's value, and as much again for its answers
    const cache = new DomainReadCache(1000, size * 10);
    for (let i = 0; i < 30; i++) cache.remember(cache.byName, `n${i}.x`, () => entry(`n${i}.x`, 1000));
    cache.remember(cache.reverseBy, "0xabc", () => Object.freeze([]));
    expect(cache.heldBytes).toBeLessThanOrEqual(size * 10);
    expect(cache.byName.size).toBeLessThanOrEqual(10);
    expect(cache.byName.has("n29.x")).toBe(true);
    expect(cache.byName.has("n0.x")).toBe(false);
    cache.clear();
    expect(cache.heldBytes).toBe(0);
    expect(cache.byName.size).toBe(0);
  });

  it("does not keep one value larger than a quarter of the bound (an owner of many domains)", () => {
    const cache = new DomainReadCache(1000, 4000);
    const big = cache.remember(cache.byOwner, "0xbig", () => entry("big.x", 5000));
    expect(big.all[0].name).toBe("big.x");
    expect(cache.byOwner.size).toBe(0);
    expect(cache.heldBytes).toBe(0);
  });

  it("keeps nothing with a limit of 0, and no value loaded across a clear", async () => {
    const none = new DomainReadCache(0);
    none.remember(none.byName, "a.x", () => entry("a.x"));
    expect(none.byName.size).toBe(0);
    const cache = new DomainReadCache();
    const loading = cache.rememberAsync(cache.byName, "a.x", async () => entry("a.x"));
    cache.clear();
    await loading;
    expect(cache.byName.size).toBe(0);
    expect(cache.heldBytes).toBe(0);
  });
});
