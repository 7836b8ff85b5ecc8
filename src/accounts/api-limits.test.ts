import { describe, expect, it } from "vitest";
import { ApiLimits, monthOf, rateLimitHeaders } from "./api-limits.js";
import { memoryBackend } from "./limiter-backend.js";
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
