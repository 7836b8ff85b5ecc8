import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type LiveAnswer,
  type LiveAnswerCache,
  layeredLiveCache,
  memoryLiveCache,
  redisLiveCache,
  storeLiveCache,
} from "./ens-live-cache.js";
import type { Store } from "../store/store.js";
import { STORE_BACKENDS } from "../../test/helpers/store-world.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const T0 = 1_800_000_000_000;

const answer = (
  fetchedAt: number,
  ttlMs = 60_000,
  eth = "0x00000000000000000000000000000000000000e1",
): LiveAnswer => ({
  records: [{ key: "token.ETH.0", value: eth, nativeKey: "addr.60", nativeValue: eth }],
  resolver: "0x00000000000000000000000000000000000000f1",
  gateways: ["https://gw.example/{sender}/{data}.json"],
  block: 7,
  fetchedAt,
  ttlMs,
});

describe("live answer caches", () => {
  let redis: Redis;
  const stores: Record<string, { store: Store; cleanup: () => Promise<void> }> = {};
  const prefix = `omniname-test-${randomBytes(6).toString("hex")}`;
  let now = T0;
  const clock = () => now;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    for (const b of STORE_BACKENDS) stores[b.name] = await b.open();
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    for (const s of Object.values(stores)) await s.cleanup();
  });

  const kinds: Array<{ name: string; make: () => LiveAnswerCache }> = [
    { name: "memory", make: () => memoryLiveCache(clock) },
    {
      name: "redis",
      make: () => redisLiveCache(redis, `${prefix}:${randomBytes(4).toString("hex")}`, clock),
    },
    {
      name: "memory over redis",
      make: () =>
        layeredLiveCache(
          memoryLiveCache(clock),
          redisLiveCache(redis, `${prefix}:${randomBytes(4).toString("hex")}`, clock),
        ),
    },
    ...STORE_BACKENDS.map((b) => ({
      name: `the store's table (${b.name})`,
      make: () => storeLiveCache(stores[b.name]!.store.accounts, clock),
    })),
  ];

  describe.each(kinds)("$name", ({ make }) => {
    it.each([
      { title: "the same stamp within the TTL is a hit", stamp: "r|10", after: 59_999, hit: true },
      {
        title: "another stamp (a resolver change in the map) is a miss",
        stamp: "r|11",
        after: 1,
        hit: false,
      },
      { title: "another resolver is a miss", stamp: "q|10", after: 1, hit: false },
      { title: "past the TTL is a miss", stamp: "r|10", after: 60_000, hit: false },
    ])("$title", async ({ stamp, after, hit }) => {
      now = T0;
      const cache = make();
      const a = answer(now);
      await cache.set("offchain.eth", "r|10", a);
      now = T0 + after;
      const got = await cache.get("offchain.eth", stamp);
      expect(got).toEqual(hit ? a : null);
      // Another name is never the answer.
      expect(await cache.get("other.eth", "r|10")).toBeNull();
    });

    it("a newer answer under a new stamp replaces the old one", async () => {
      now = T0;
      const cache = make();
      await cache.set("offchain.eth", "r|10", answer(now));
      const newer = answer(now, 60_000, "0x00000000000000000000000000000000000000e2");
      await cache.set("offchain.eth", "r|12", newer);
      expect(await cache.get("offchain.eth", "r|12")).toEqual(newer);
      expect(await cache.get("offchain.eth", "r|10")).toBeNull();
    });
  });

  it("one process's answer reaches another through Redis, each with its own memory layer", async () => {
    now = T0;
    const shared = `${prefix}:shared`;
    const first = layeredLiveCache(memoryLiveCache(clock), redisLiveCache(redis, shared, clock));
    const second = layeredLiveCache(memoryLiveCache(clock), redisLiveCache(redis, shared, clock));
    const a = answer(now);
    await first.set("alice.wild.eth", "r|3", a);
    expect(await second.get("alice.wild.eth", "r|3")).toEqual(a);
    // Redis keeps it no longer than the answer lives.
    const ttl = await redis.pttl(`${shared}:ens-live:alice.wild.eth`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it("one process's answer reaches another through PostgreSQL's table", async () => {
    now = T0;
    const pg = stores.postgres!.store;
    const first = layeredLiveCache(memoryLiveCache(clock), storeLiveCache(pg.accounts, clock));
    const second = layeredLiveCache(memoryLiveCache(clock), storeLiveCache(pg.accounts, clock));
    const a = answer(now);
    await first.set("bob.wild.eth", "r|4", a);
    expect(await second.get("bob.wild.eth", "r|4")).toEqual(a);
    expect(await second.get("bob.wild.eth", "r|5")).toBeNull();
  });

  it("a Redis that does not answer is a miss, never an error", async () => {
    const down = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on("error", () => {});
    const cache = redisLiveCache(down, prefix, clock);
    await cache.set("offchain.eth", "r|1", answer(now));
    expect(await cache.get("offchain.eth", "r|1")).toBeNull();
    down.disconnect();
  });
});
