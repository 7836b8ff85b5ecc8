import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { monthOf } from "../../src/accounts/api-limits.js";
import { ensureDemoProject } from "../../src/accounts/api-keys.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { redisBackend } from "../../src/accounts/limiter-backend.js";
import { buildApp } from "../../src/api/app.js";
import { loadConfig } from "../../src/config/load-config.js";
import { dropRedisKeys } from "../helpers/redis-keys.js";
import { createAccount, createProject, signedIn } from "./helpers/accounts.js";
import { type ConsoleTestApp, createConsoleTestApp, V1 } from "./helpers/console-app.js";

const RESOLVE = `${V1}/resolve?domain=alice.wallet`;

/** Parses `"rate";r=5;t=1, "quota";r=9;t=100` into { rate: { r: 5, t: 1 }, quota: {...} }. */
function parseList(header: unknown): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const item of String(header).split(",")) {
    const [name, ...params] = item.trim().split(";");
    out[JSON.parse(name)] = Object.fromEntries(
      params.map((p) => p.split("=")).map(([k, v]) => [k, Number(v)]),
    );
  }
  return out;
}

describe("rate limit per key and monthly quota per project", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  async function keys(plan: string, n = 1) {
    const owner = await createAccount(t, "owner");
    const p = await createProject(t, [{ id: owner.id, role: "owner" }], plan);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push((await t.services.projects.createKey(p.id, `k${i}`)).key);
    return { projectId: p.id, keys: out };
  }

  const get = (key: string, url = RESOLVE) => t.app.inject({ url, headers: { "api-key": key } });

  it("answers the 101st request in a window of 100 with 429 RATE_LIMITED and correct headers", async () => {
    // Plan "tiny": 10 requests per second over a 10-second window, i.e. 100 per window.
    const {
      keys: [key, other],
    } = await keys("tiny", 2);
    const month = monthOf(t.clock.now);
    const monthS = (month.endMs - month.startMs) / 1000;
    for (let i = 1; i <= 100; i++) {
      const res = await get(key);
      expect(res.statusCode, `request ${i}`).toBe(200);
      const policy = parseList(res.headers["ratelimit-policy"]);
      expect(policy).toEqual({ rate: { q: 100, w: 10 }, quota: { q: 1000, w: monthS } });
      const state = parseList(res.headers.ratelimit);
      expect(state.rate.r).toBe(100 - i);
      expect(state.rate.t).toBeGreaterThanOrEqual(1);
      expect(state.rate.t).toBeLessThanOrEqual(10);
      expect(state.quota.r).toBe(1000 - i);
      expect(res.headers["retry-after"]).toBeUndefined();
    }
    const refused = await get(key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      result: false,
      error: { code: "RATE_LIMITED", message: "Too many requests." },
    });
    const retry = Number(refused.headers["retry-after"]);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(10);
    const state = parseList(refused.headers.ratelimit);
    expect(state.rate).toEqual({ r: 0, t: retry });
    // A refused request does not consume quota.
    expect(state.quota.r).toBe(900);
    expect(parseList(refused.headers["ratelimit-policy"]).rate).toEqual({ q: 100, w: 10 });
    // The rate is per key: the project's other key is not limited.
    expect((await get(other)).statusCode).toBe(200);
  });

  it("serves the quota exactly: the last request of the month's quota passes, the next gets 429 QUOTA_EXCEEDED", async () => {
    // Plan "metered": 25 requests a month.
    const {
      projectId,
      keys: [a, b],
    } = await keys("metered", 2);
    for (let i = 1; i <= 25; i++) {
      const res = await get(i % 2 ? a : b);
      expect(res.statusCode, `request ${i}`).toBe(200);
      expect(parseList(res.headers.ratelimit).quota.r).toBe(25 - i);
    }
    const secondsLeft = Math.ceil((monthOf(t.clock.now).endMs - t.clock.now) / 1000);
    for (const key of [a, b]) {
      const refused = await get(key);
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe("QUOTA_EXCEEDED");
      expect(Number(refused.headers["retry-after"])).toBe(secondsLeft);
      expect(parseList(refused.headers.ratelimit).quota).toEqual({ r: 0, t: secondsLeft });
    }
    expect(await t.services.limits.quotaUsed(projectId)).toBe(25);

    // A restarted process (fresh in-memory counters over the same store) keeps the month's count.
    await t.services.usage.flush();
    const services = createConsoleServices(t.ctx);
    const app = await buildApp(t.ctx, { services });
    try {
      const res = await app.inject({ url: RESOLVE, headers: { "api-key": a } });
      expect(res.statusCode).toBe(429);
      expect(res.json().error.code).toBe("QUOTA_EXCEEDED");
      const dash = await services.projects.dashboard(projectId);
      expect(dash.quota).toMatchObject({ limit: 25, used: 25, remaining: 0 });
    } finally {
      await app.close();
      await services.close();
    }
  });

  it("puts the RateLimit headers on every answer to a valid key, errors included", async () => {
    const owner = await signedIn(t, "sec");
    const p = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const { key } = await t.services.projects.createKey(p.id, "k");
    const cases = [
      [`${V1}/resolve?domain=nobody.wallet`, 404],
      [`${V1}/resolve?domain=`, 400],
      [`${V1}/deep-resolve?domain=alice.wallet`, 200],
      [`${V1}/reverse-resolve?walletAddress=0x12`, 400],
    ] as const;
    for (const [url, status] of cases) {
      const res = await get(key, url);
      expect(res.statusCode, url).toBe(status);
      expect(res.headers.ratelimit, url).toMatch(/^"rate";r=\d+;t=\d+, "quota";r=\d+;t=\d+$/);
      expect(res.headers["ratelimit-policy"], url).toMatch(/^"rate";q=\d+;w=\d+, "quota";q=\d+;w=\d+$/);
    }
    await owner.agent.put(`projects/${p.id}/security`, { allowedIps: ["192.0.2.1"], allowedOrigins: [] });
    const denied = await get(key);
    expect(denied.statusCode).toBe(403);
    expect(denied.headers.ratelimit).toBeDefined();
    const anonymous = await t.app.inject({ url: RESOLVE });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers.ratelimit).toBeUndefined();
  });

  it("counts usage in memory and writes it in one batch, never per request", async () => {
    const {
      projectId,
      keys: [key],
    } = await keys("free");
    await t.services.usage.flush();
    for (let i = 0; i < 50; i++) await get(key, i % 5 === 0 ? `${V1}/resolve?domain=nobody.wallet` : RESOLVE);
    const before = await t.store.accounts
      .selectFrom("usage_counters")
      .selectAll()
      .where("project_id", "=", projectId)
      .execute();
    expect(before).toEqual([]);
    await t.services.usage.flush();
    const rows = await t.store.accounts
      .selectFrom("usage_counters")
      .selectAll()
      .where("project_id", "=", projectId)
      .execute();
    const metric = (m: string) => Number(rows.find((r) => r.metric === m)?.count ?? 0);
    expect(metric("requests")).toBe(50);
    expect(metric("quota")).toBe(50);
    expect(metric("status:404")).toBe(10);
    const latency = rows.filter((r) => r.metric.startsWith("lat:")).reduce((n, r) => n + Number(r.count), 0);
    expect(latency).toBe(50);
    expect(new Set(rows.map((r) => r.endpoint))).toEqual(new Set(["resolve"]));
  });
});

describe("limits shared through Redis (127.0.0.1:6379)", () => {
  let t: ConsoleTestApp;
  let redis: Redis;
  const prefix = `omniname-test-${randomBytes(6).toString("hex")}`;
  beforeAll(async () => {
    redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
    t = await createConsoleTestApp({ services: { backend: redisBackend(redis, prefix) } });
  });
  afterAll(async () => {
    await t?.close();
    await dropRedisKeys(redis, `${prefix}*`);
    redis.disconnect();
  });

  it("counts one window across two API processes: the 101st request is refused", async () => {
    // A second "process": its own services and app over the same store and Redis.
    const services2 = createConsoleServices(t.ctx, { backend: redisBackend(redis, prefix) });
    const app2 = await buildApp(t.ctx, { services: services2 });
    try {
      const owner = await createAccount(t, "redis");
      const p = await createProject(t, [{ id: owner.id, role: "owner" }], "tiny");
      const { key } = await t.services.projects.createKey(p.id, "k");
      const apps = [t.app, app2];
      for (let i = 0; i < 100; i++) {
        const res = await apps[i % 2].inject({ url: RESOLVE, headers: { "api-key": key } });
        expect(res.statusCode, `request ${i + 1}`).toBe(200);
      }
      const refused = await app2.inject({ url: RESOLVE, headers: { "api-key": key } });
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe("RATE_LIMITED");
      expect(parseList(refused.headers.ratelimit).rate.r).toBe(0);
      // The counters are in Redis under the test's prefix.
      expect((await redis.keys(`${prefix}:rate:*`)).length).toBeGreaterThan(0);
      expect(await t.services.limits.quotaUsed(p.id)).toBe(100);
      expect(await services2.limits.quotaUsed(p.id)).toBe(100);
    } finally {
      await app2.close();
      await services2.close();
    }
  });
});

describe("limits with REDIS_URL", () => {
  it("count a fresh process's very first requests in Redis, not in the start-up fallback", async () => {
    const prefix = `omniname-test-${randomBytes(6).toString("hex")}`;
    const t = await createConsoleTestApp({
      config: { redisUrl: "redis://127.0.0.1:6379" },
      services: { keyPrefix: prefix },
    });
    const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
    try {
      const owner = await createAccount(t, "first");
      const p = await createProject(t, [{ id: owner.id, role: "owner" }], "tiny");
      const { key } = await t.services.projects.createKey(p.id, "k");
      // A new process (services and app built from REDIS_URL), asked at once once it is ready.
      const services2 = createConsoleServices(t.ctx, { keyPrefix: prefix });
      const app2 = await buildApp(t.ctx, { services: services2 });
      try {
        await app2.ready();
        const res = await app2.inject({ url: RESOLVE, headers: { "api-key": key } });
        expect(res.statusCode).toBe(200);
        // The counter, not its companion `:seed` key (month-counter.ts).
        const [quotaKey] = (await redis.keys(`${prefix}:quota:${p.id}:*`)).filter(
          (k) => !k.endsWith(":seed"),
        );
        expect(quotaKey, "the quota counter is in Redis").toBeDefined();
        expect(await redis.get(quotaKey)).toBe("1");
      } finally {
        await app2.close();
        await services2.close();
      }
    } finally {
      await t.close();
      await dropRedisKeys(redis, `${prefix}*`);
      redis.disconnect();
    }
  });
});

describe("the demo key on the default plans", () => {
  it("serves a newcomer's first loop: 50 quick resolves, all 200", async () => {
    const demoApiKey = `demo-${randomBytes(12).toString("hex")}`;
    const t = await createConsoleTestApp({ config: { plans: loadConfig({}, {}).plans, demoApiKey } });
    try {
      const { project } = await ensureDemoProject(t.ctx);
      expect(project.plan).toBe("demo");
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => t.app.inject({ url: RESOLVE, headers: { "api-key": demoApiKey } })),
      );
      expect(answers.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    } finally {
      await t.close();
    }
  });
});
