import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiLimits } from "../../src/accounts/api-limits.js";
import { redisBackend } from "../../src/accounts/limiter-backend.js";
import type { Plan } from "../../src/accounts/plans.js";
import { type PrivateRedis, startPrivateRedis } from "../helpers/private-services.js";

/**
 * The monthly quota across a Redis outage (a Redis of the test's own, stopped and started): the
 * count goes on from where Redis left it while Redis is away, what was counted meanwhile is added
 * back when it returns with its data, and a Redis that returns empty (no persistence) is seeded
 * again from the usage table instead of counting from zero. Before, the counter was seeded once
 * per process and month: a Redis restarted empty held 7,798 where the usage table said 49,830.
 */
const PLAN: Plan = {
  name: "test",
  rps: 1_000_000,
  rateWindowS: 1,
  monthlyQuota: 1_000,
  maxProjects: 1,
  maxKeys: 1,
  maxMembers: 1,
} as Plan;
const NOW = Date.UTC(2026, 11, 7, 12);
const PROJECT = 7;
const KEY = `omniname-test:quota:${PROJECT}:2026-12`;

describe("the monthly quota across a Redis outage", () => {
  let redis: PrivateRedis;
  let client: Redis;
  let reader: Redis;
  /** What the usage table says the project used this month (the test plays the table). */
  let table = 0;
  let seeds = 0;
  let limits: ApiLimits;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    // As console-services.ts builds it: no offline queue, one retry, so an outage fails at once.
    client = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    client.on("error", () => {});
    reader = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    reader.on("error", () => {});
    for (let i = 0; i < 200 && (client.status !== "ready" || reader.status !== "ready"); i++)
      await new Promise((r) => setTimeout(r, 25));
    limits = new ApiLimits({
      backend: redisBackend(client, "omniname-test"),
      clock: () => NOW,
      loadQuotaUsed: async () => {
        seeds++;
        return table;
      },
    });
  });

  afterAll(async () => {
    client?.disconnect();
    reader?.disconnect();
    await redis?.destroy();
  });

  async function serve(n: number): Promise<number[]> {
    const used: number[] = [];
    for (let i = 0; i < n; i++) {
      const d = await limits.consume(1, PROJECT, PLAN);
      expect(d.allowed).toBe(true);
      used.push(d.state.quota.used);
    }
    return used;
  }

  async function until(ready: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(ready()).toBe(true);
  }

  it("seeds from the usage table, then counts in Redis", async () => {
    table = 100;
    expect(await serve(5)).toEqual([101, 102, 103, 104, 105]);
    expect(Number(await reader.get(KEY))).toBe(105);
    expect(seeds).toBe(1);
  });

  it("goes on from Redis' last count while Redis is away, and adds that count back when it returns", async () => {
    await redis.stop({ keepData: true });
    await until(() => client.status !== "ready");
    // Not from zero: the process continues the count it last had.
    expect(await serve(3)).toEqual([106, 107, 108]);
    await redis.start();
    await until(() => client.status === "ready" && reader.status === "ready");
    expect(Number(await reader.get(KEY))).toBe(105); // the outage's 3 are not there yet
    expect(await serve(1)).toEqual([109]);
    expect(Number(await reader.get(KEY))).toBe(109); // merged with the next write
    expect(seeds).toBe(1);
  });

  it("seeds again from the usage table when Redis returns without its data", async () => {
    await redis.stop();
    await until(() => client.status !== "ready");
    expect(await serve(2)).toEqual([110, 111]);
    // Meanwhile the usage table has every request so far (flushed by the API processes).
    table = 111;
    await redis.start();
    await until(() => client.status === "ready" && reader.status === "ready");
    expect(await reader.get(KEY)).toBeNull();
    expect(await serve(1)).toEqual([112]);
    expect(Number(await reader.get(KEY))).toBe(112);
    expect(seeds).toBe(2);
    expect(await limits.quotaUsed(PROJECT)).toBe(112);
  });

  it("a second process adds its outage's counts to no counter seeded again meanwhile", async () => {
    const other = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    other.on("error", () => {});
    await until(() => other.status === "ready");
    const second = new ApiLimits({
      backend: redisBackend(other, "omniname-test"),
      clock: () => NOW,
      loadQuotaUsed: async () => table,
    });
    try {
      expect((await second.consume(1, PROJECT, PLAN)).state.quota.used).toBe(113);
      await redis.stop();
      await until(() => client.status !== "ready" && other.status !== "ready");
      // Both processes count aside: 2 here, 3 there.
      await serve(2);
      for (let i = 0; i < 3; i++) await second.consume(1, PROJECT, PLAN);
      table = 118; // every request so far, flushed to the usage table
      await redis.start();
      await until(() => client.status === "ready" && other.status === "ready" && reader.status === "ready");
      // This process finds the counter missing and seeds it from the table (118, then its request).
      expect(await serve(1)).toEqual([119]);
      // The other's 3 are in the table already: its next request adds itself alone.
      expect((await second.consume(1, PROJECT, PLAN)).state.quota.used).toBe(120);
      expect(Number(await reader.get(KEY))).toBe(120);
    } finally {
      other.disconnect();
    }
  });

  it("refuses over the quota during an outage, as before it", async () => {
    table = 0;
    const full: Plan = { ...PLAN, monthlyQuota: 121 } as Plan;
    expect((await limits.consume(1, PROJECT, full)).allowed).toBe(true); // 121
    await redis.stop({ keepData: true });
    await until(() => client.status !== "ready");
    expect(await limits.consume(1, PROJECT, full)).toMatchObject({ allowed: false, code: "QUOTA_EXCEEDED" });
    await redis.start();
    await until(() => client.status === "ready" && reader.status === "ready");
    expect(Number(await reader.get(KEY))).toBe(121);
  });
});
