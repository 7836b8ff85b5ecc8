import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropRedisKeys } from "../helpers/redis-keys.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";

/** 5 names per 5-second window per key (the window opens with the first call); 12 names a month. */
const PLANS = JSON.stringify({
  free: { rps: 10, monthlyQuota: 100_000, maxProjects: 3, maxKeys: 5, maxMembers: 5 },
  internal: { rps: 1_000_000, monthlyQuota: 1_000_000_000, maxProjects: 100, maxKeys: 100, maxMembers: 100 },
  small: { rps: 1, rateWindowS: 5, monthlyQuota: 12, maxProjects: 1, maxKeys: 1, maxMembers: 1 },
});

const batch = (t: TestApp, n: number) =>
  t.app.inject({
    method: "POST",
    url: `${V1}/batch/resolve`,
    headers: { "api-key": t.key, "content-type": "application/json" },
    payload: { domains: Array.from({ length: n }, () => "alice.wallet") },
  });

/** `"rate";r=3;t=59, "quota";r=9;t=…` → { rate: 3, quota: 9 }. */
function remaining(header: unknown): { rate: number; quota: number } {
  const m = /"rate";r=(\d+);t=\d+, "quota";r=(\d+)/.exec(String(header));
  if (!m) throw new Error(`no RateLimit header: ${String(header)}`);
  return { rate: Number(m[1]), quota: Number(m[2]) };
}

// The rate limiter counts in Redis when REDIS_URL is set: both backends of the limits.
describe.each([
  ["process memory", {}],
  [
    "Redis",
    { REDIS_URL: "redis://127.0.0.1:6379", REDIS_KEY_PREFIX: `t-batch-${randomBytes(4).toString("hex")}` },
  ],
])("a batch counts all of its inputs or none (limits in %s)", (_label, env) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { PLANS, DEFAULT_PLAN: "free", ...env }, plan: "small" });
    // The Redis run really counts in Redis.
    if ("REDIS_URL" in env) expect(await t.services.redisHealth?.()).toBe("up");
  });
  afterAll(async () => {
    await t?.close();
    if ("REDIS_URL" in env) await dropRedisKeys(env.REDIS_URL, `${env.REDIS_KEY_PREFIX}:*`);
  });

  it("charges each input against the rate, refuses a batch that does not fit whole, and charges nothing for it", async () => {
    const first = await batch(t, 3);
    expect(first.statusCode).toBe(200);
    expect(remaining(first.headers.ratelimit)).toEqual({ rate: 2, quota: 9 });
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(3);

    const refused = await batch(t, 3);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe("RATE_LIMITED");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(remaining(refused.headers.ratelimit)).toEqual({ rate: 2, quota: 9 });
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(3);

    // The two points left are still there: a batch of two fits.
    const fits = await batch(t, 2);
    expect(fits.statusCode).toBe(200);
    expect(remaining(fits.headers.ratelimit)).toEqual({ rate: 0, quota: 7 });
  });

  it("counts a refused body as one request, and refuses any body at the door once the window is used up", async () => {
    await new Promise((r) => setTimeout(r, 5_100)); // a fresh 5 s window
    const bad = () =>
      t.app.inject({
        method: "POST",
        url: `${V1}/batch/resolve`,
        headers: { "api-key": t.key, "content-type": "application/json" },
        payload: "{not json",
      });
    const quota0 = await t.services.limits.quotaUsed(t.projectId);
    for (let i = 0; i < 5; i++) expect((await bad()).statusCode).toBe(400);
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(quota0 + 5);
    for (const res of [await bad(), await batch(t, 1)]) {
      expect(res.statusCode).toBe(429);
      expect(res.json().error.code).toBe("RATE_LIMITED");
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    }
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(quota0 + 5);
  });

  it("says so when a batch is larger than the whole rate window", async () => {
    await new Promise((r) => setTimeout(r, 5_100)); // a fresh 5 s window
    const res = await batch(t, 6);
    expect(res.statusCode).toBe(429);
    expect(res.json().error.message).toContain("more than the key's rate allows in one window (5)");
    expect(res.headers["retry-after"]).toBeDefined();
  });
});

describe.each([
  ["process memory", {}],
  [
    "Redis",
    { REDIS_URL: "redis://127.0.0.1:6379", REDIS_KEY_PREFIX: `t-batchq-${randomBytes(4).toString("hex")}` },
  ],
])("the monthly quota refuses a batch whole (limits in %s)", (_label, env) => {
  let t: TestApp;
  beforeAll(async () => {
    const plans = JSON.parse(PLANS) as Record<string, Record<string, number>>;
    plans.small = { ...plans.small, rps: 1000, rateWindowS: 1 };
    t = await createTestApp({
      env: { PLANS: JSON.stringify(plans), DEFAULT_PLAN: "free", ...env },
      plan: "small",
    });
  });
  afterAll(async () => {
    await t?.close();
    if ("REDIS_URL" in env) await dropRedisKeys(env.REDIS_URL, `${env.REDIS_KEY_PREFIX}:*`);
  });

  it("refuses with QUOTA_EXCEEDED and Retry-After, leaving the quota and the usage as they were", async () => {
    expect((await batch(t, 10)).statusCode).toBe(200);
    await t.services.usage.flush();
    const usageBefore = await t.services.limits.quotaUsed(t.projectId);
    const refused = await batch(t, 3);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe("QUOTA_EXCEEDED");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(remaining(refused.headers.ratelimit).quota).toBe(2);
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(usageBefore);
    await t.services.usage.flush();
    const row = await t.store.accounts
      .selectFrom("usage_counters")
      .select((eb) => eb.fn.sum<number>("count").as("n"))
      .where("project_id", "=", t.projectId)
      .where("metric", "=", "quota")
      .executeTakeFirst();
    expect(Number(row?.n)).toBe(10);
    // Exactly what is left still fits.
    expect((await batch(t, 2)).statusCode).toBe(200);
    expect((await batch(t, 1)).statusCode).toBe(429);
  });
});
