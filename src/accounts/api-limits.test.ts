import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { ApiLimits, monthOf, rateLimitHeaders } from "./api-limits.js";
import { memoryBackend, redisBackend } from "./limiter-backend.js";
import type { Plan } from "./plans.js";

const plan: Plan = {
  name: "p",
  rps: 2,
  rateWindowS: 1,
  monthlyQuota: 3,
  maxProjects: 1,
  maxKeys: 1,
  maxMembers: 1,
};

describe("monthOf", () => {
  it.each([
    [Date.UTC(2026, 0, 31, 23, 59), "2026-01", Date.UTC(2026, 1, 1)],
    [Date.UTC(2026, 1, 1), "2026-02", Date.UTC(2026, 2, 1)],
    [Date.UTC(2024, 1, 29, 12), "2024-02", Date.UTC(2024, 2, 1)],
    [Date.UTC(2026, 11, 31, 12), "2026-12", Date.UTC(2027, 0, 1)],
  ])("%s is in %s, which ends at %s", (now, key, end) => {
    expect(monthOf(now)).toMatchObject({ key, endMs: end });
  });
});

describe("rateLimitHeaders", () => {
  it("writes the draft's structured fields", () => {
    const h = rateLimitHeaders({
      rate: { limit: 100, remaining: 57, resetS: 1, windowS: 1 },
      quota: { limit: 5000, used: 10, remaining: 4990, resetS: 3600, windowS: 2592000 },
    });
    expect(h).toEqual({
      "ratelimit-policy": '"rate";q=100;w=1, "quota";q=5000;w=2592000',
      ratelimit: '"rate";r=57;t=1, "quota";r=4990;t=3600',
    });
  });
});

describe("ApiLimits", () => {
  it("refuses the request after the rate, then after the quota, counting refusals in neither", async () => {
    const now = Date.UTC(2026, 5, 15);
    let seeded = 0;
    const limits = new ApiLimits({
      backend: memoryBackend(`t${Math.random()}`),
      clock: () => now,
      loadQuotaUsed: async () => {
        seeded++;
        return 1;
      },
    });
    const a = await limits.consume(1, 7, plan);
    expect(a).toMatchObject({
      allowed: true,
      state: { rate: { remaining: 1 }, quota: { used: 2, remaining: 1 } },
    });
    expect(seeded).toBe(1);
    expect((await limits.consume(1, 7, plan)).allowed).toBe(true);
    const r = await limits.consume(1, 7, plan);
    expect(r).toMatchObject({ allowed: false, code: "RATE_LIMITED" });
    // Key 2 of the same project: its own rate, the project's quota (1 seeded + 2 served = 3 = full);
    // June 15 00:00 UTC leaves 16 days of the month.
    const q = await limits.consume(2, 7, plan);
    expect(q).toMatchObject({ allowed: false, code: "QUOTA_EXCEEDED", retryAfterS: 16 * 86400 });
    expect(await limits.quotaUsed(7)).toBe(3);
    expect(seeded).toBe(1);
  });
});

describe("ApiLimits.consumeNow (the fast path's decision without a promise)", () => {
  const make = (backend = memoryBackend(`t${Math.random()}`)) =>
    new ApiLimits({ backend, clock: () => Date.UTC(2026, 5, 15), loadQuotaUsed: async () => 1 });

  it("decides as consume does, in turn with it on the same counters, and counts nothing when it cannot", async () => {
    const a = make();
    const b = make();
    // Before the month's counter is seeded: no decision, nothing counted.
    expect(a.consumeNow(1, 7, plan)).toBeUndefined();
    const seen = { sync: [] as unknown[], async: [] as unknown[] };
    // The same sequence on both: a through consumeNow wherever it decides, b through consume only.
    for (const key of [1, 1, 1, 2, 2]) {
      const viaNow = a.consumeNow(key, 7, plan) ?? (await a.consume(key, 7, plan));
      seen.sync.push(viaNow);
      seen.async.push(await b.consume(key, 7, plan));
    }
    // The first call of `a` seeded through consume; every later one was decided synchronously.
    expect(seen.sync).toEqual(seen.async);
    expect(seen.sync.map((d) => (d as { allowed: boolean; code?: string }).code ?? "ok")).toEqual([
      "ok",
      "ok",
      "RATE_LIMITED",
      "QUOTA_EXCEEDED",
      "QUOTA_EXCEEDED",
    ]);
    expect(await a.quotaUsed(7)).toBe(3);
    // consume and consumeNow count into one window: a key spent by one is spent for the other.
    const c = make();
    await c.consume(5, 8, { ...plan, monthlyQuota: 100 });
    expect(c.consumeNow(5, 8, { ...plan, monthlyQuota: 100 })).toMatchObject({ allowed: true });
    expect(await c.consume(5, 8, { ...plan, monthlyQuota: 100 })).toMatchObject({ code: "RATE_LIMITED" });
    expect(c.consumeNow(5, 8, { ...plan, monthlyQuota: 100 })).toMatchObject({ code: "RATE_LIMITED" });
  });

  it("leaves Redis-backed limits to consume", async () => {
    const redis = new Redis("redis://127.0.0.1:6379", { lazyConnect: true, maxRetriesPerRequest: 1 });
    const prefix = `omniname-test:${randomBytes(6).toString("hex")}`;
    try {
      const limits = make(redisBackend(redis, prefix));
      expect((await limits.consume(1, 7, plan)).allowed).toBe(true);
      expect(limits.consumeNow(1, 7, plan)).toBeUndefined();
      expect(await limits.quotaUsed(7)).toBe(2);
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describe("the monthly quota at every date of the month", () => {
  const quota5: Plan = { ...plan, rps: 1000, monthlyQuota: 5 };
  const redis = new Redis("redis://127.0.0.1:6379", { lazyConnect: true, maxRetriesPerRequest: 1 });
  const prefix = `omniname-test:${randomBytes(6).toString("hex")}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  const backends = {
    memory: () => memoryBackend(`t${Math.random()}`),
    redis: () => redisBackend(redis, `${prefix}:${randomBytes(4).toString("hex")}`),
  };
  // Lets due timers run between two requests, as separate HTTP requests would: a counter whose
  // expiry timer overflowed (fires after 1 ms) is gone by the next request.
  const nextTurn = () => new Promise((r) => setTimeout(r, 5));
  // July: 31 days, so the 8th still leaves more than 24.8 days (the longest wait of a Node timer).
  const dates: Array<[string, number]> = [
    ["the 1st", Date.UTC(2026, 6, 1)],
    ["the 5th", Date.UTC(2026, 6, 5, 9, 30)],
    ["the 8th", Date.UTC(2026, 6, 8)],
    ["the 24th", Date.UTC(2026, 6, 24)],
    ["the 28th", Date.UTC(2026, 6, 28, 18)],
    ["the last day", Date.UTC(2026, 6, 31, 23, 59, 59)],
  ];

  describe.each(Object.keys(backends) as Array<keyof typeof backends>)("%s counters", (kind) => {
    it.each(dates)("on %s serves a quota of 5 exactly, then refuses", async (_label, now) => {
      const warnings: string[] = [];
      const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
      process.on("warning", onWarning);
      try {
        const limits = new ApiLimits({
          backend: backends[kind](),
          clock: () => now,
          loadQuotaUsed: async () => 0,
        });
        for (let i = 1; i <= 5; i++) {
          const d = await limits.consume(i, 7, quota5);
          expect(d, `request ${i}`).toMatchObject({ allowed: true, state: { quota: { used: i } } });
          await nextTurn();
        }
        for (let i = 6; i <= 8; i++) {
          expect(await limits.consume(i, 7, quota5), `request ${i}`).toMatchObject({
            allowed: false,
            code: "QUOTA_EXCEEDED",
            retryAfterS: Math.ceil((Date.UTC(2026, 7, 1) - now) / 1000),
          });
          await nextTurn();
        }
        expect(await limits.quotaUsed(7)).toBe(5);
        expect(warnings).toEqual([]);
      } finally {
        process.off("warning", onWarning);
      }
    });

    it("starts a new count when the month turns", async () => {
      let now = Date.UTC(2026, 6, 31, 23, 59, 59, 500);
      const limits = new ApiLimits({
        backend: backends[kind](),
        clock: () => now,
        loadQuotaUsed: async () => 0,
      });
      for (let i = 1; i <= 5; i++) expect((await limits.consume(i, 7, quota5)).allowed).toBe(true);
      expect(await limits.consume(6, 7, quota5)).toMatchObject({ code: "QUOTA_EXCEEDED", retryAfterS: 1 });
      now = Date.UTC(2026, 7, 1);
      expect(await limits.consume(7, 7, quota5)).toMatchObject({
        allowed: true,
        state: { quota: { used: 1, remaining: 4, resetS: 31 * 86_400 } },
      });
    });
  });
});

describe("memory limiters", () => {
  it("refuse a window longer than a Node timer can wait", () => {
    expect(() => memoryBackend("t").create({ name: "long", points: 1, durationS: 25 * 86_400 })).toThrow(
      /longer than a timer can wait/,
    );
  });
});
