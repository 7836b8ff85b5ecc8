import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { ADDR } from "./helpers/world.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** `name{…} value` of a Prometheus text exposition (the first sample whose labels include `labels`). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.split(" ").pop());
  }
  return 0;
}

/** The rate's remaining requests in a RateLimit header (`"rate";r=9;t=1, "quota";r=…`). */
function rateLeft(field: string): number {
  return Number(/"rate";r=(\d+)/.exec(field)?.[1]);
}

/**
 * The v1 fast path (src/api/v1-fast-path.ts) over real HTTP (app.inject never reaches it): a
 * repeated GET answered before Fastify routes it gets the very bytes and headers the hooks give,
 * counts once against the limits, in the usage and in the metrics, and follows every change at
 * once: a commit, a settings change, a revoked key, an allowlist. The fast path's own counter tells
 * which answers it gave.
 */
describe.each<Backend>(["sqlite", "postgres"])("the v1 fast path: %s", (backend) => {
  let t: TestApp;
  let base: string;
  const registry = new Registry();
  const fast = async () => sample(await registry.metrics(), "omniname_api_fast_answers_total");

  beforeAll(async () => {
    t = await createTestApp({ backend, plan: "free", app: { metricsRegistry: registry } });
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function get(path: string, headers: Record<string, string> = {}, key = t.key): Promise<Answer> {
    const res = await fetch(`${base}${path}`, { headers: { "api-key": key, ...headers } });
    return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  }

  /** Waits out the key rate's window (1 s on the free plan) so a test starts with its full rate. */
  const freshRate = () => new Promise((r) => setTimeout(r, 1_100));

  /** Asks until an answer comes from the fast path (PostgreSQL's channel echoes this process's writes). */
  async function fastAnswer(
    path: string,
    headers: Record<string, string> = {},
    key = t.key,
  ): Promise<Answer> {
    for (let i = 0; i < 50; i++) {
      const before = await fast();
      const a = await get(path, headers, key);
      if ((await fast()) === before + 1) return a;
      await new Promise((r) => setTimeout(r, 40));
    }
    throw new Error(`${path} is never answered by the fast path`);
  }

  it("answers a repeated resolve, deep-resolve and reverse-resolve with the hooks' bytes and headers", async () => {
    for (const path of [
      `${V1}/resolve?domain=alice.wallet`,
      `${V1}/deep-resolve?domain=alice.wallet&network=POLYGON`,
      `${V1}/reverse-resolve?walletAddress=${ADDR.alice}`,
    ]) {
      await freshRate();
      const before = await fast();
      const first = await get(path);
      expect(first.status).toBe(200);
      expect(await fast()).toBe(before);
      const again = await fastAnswer(path);
      expect(again.status).toBe(200);
      expect(again.body).toBe(first.body);
      const { date: _d1, ratelimit: r1, ...h1 } = first.headers;
      const { date: _d2, ratelimit: r2, ...h2 } = again.headers;
      expect(h2).toEqual(h1);
      // One more request counted against the key's rate, not two.
      expect(rateLeft(r2)).toBeLessThan(rateLeft(r1));
      const next = await get(path);
      expect(rateLeft(next.headers.ratelimit)).toBe(rateLeft(r2) - 1);
    }
  });

  it("refuses past the key's rate with the hooks' 429, counting the refused request once", async () => {
    const path = `${V1}/resolve?domain=alice.wallet`;
    await fastAnswer(path);
    await freshRate();
    const answers: Answer[] = [];
    for (let i = 0; i < 12; i++) answers.push(await get(path));
    const statuses = answers.map((a) => a.status);
    // The free plan: 10 a second (the window may turn once during the loop).
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(10);
    const refused = answers.find((a) => a.status === 429);
    expect(refused).toBeDefined();
    expect(JSON.parse(refused?.body ?? "{}").error.code).toBe("RATE_LIMITED");
    expect(Number(refused?.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused?.headers["content-security-policy"]).toBeDefined();
    expect(rateLeft(refused?.headers.ratelimit ?? "")).toBe(0);
  });

  it("counts its answers in the usage and in the request metrics", async () => {
    const path = `${V1}/resolve?domain=bob.eth`;
    await freshRate();
    await fastAnswer(path);
    await t.services.usage.flush();
    const counted = async () =>
      Number(
        (
          await t.store.accounts
            .selectFrom("usage_counters")
            .select((eb) => eb.fn.sum<number>("count").as("n"))
            .where("project_id", "=", t.projectId)
            .where("metric", "=", "quota")
            .executeTakeFirst()
        )?.n,
      );
    const usageBefore = await counted();
    const labels = { route: `${V1}/resolve`, method: "GET", status: "200" };
    const text = await registry.metrics();
    const requestsBefore = sample(text, "omniname_api_requests_total", labels);
    const durationBefore = sample(text, "omniname_api_request_duration_seconds_count", labels);
    const sumBefore = sample(text, "omniname_api_request_duration_seconds_sum", labels);
    const fastBefore = await fast();
    for (let i = 0; i < 5; i++) expect((await get(path)).status).toBe(200);
    expect(await fast()).toBe(fastBefore + 5);
    const after = await registry.metrics();
    expect(sample(after, "omniname_api_requests_total", labels)).toBe(requestsBefore + 5);
    // The latencies, added to the histogram when scraped: the count, a sum that grew, and the
    // cumulative buckets ending at the count.
    const count = sample(after, "omniname_api_request_duration_seconds_count", labels);
    expect(count).toBe(durationBefore + 5);
    expect(sample(after, "omniname_api_request_duration_seconds_sum", labels)).toBeGreaterThan(sumBefore);
    expect(sample(after, "omniname_api_request_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(
      count,
    );
    expect(sample(after, "omniname_api_request_duration_seconds_bucket", { ...labels, le: "5" })).toBe(count);
    await t.services.usage.flush();
    expect(await counted()).toBe(usageBefore + 5);
  });

  it("a commit followed at once by a request gets the new answer", async () => {
    const path = `${V1}/resolve?domain=alice.wallet`;
    await freshRate();
    expect(JSON.parse((await fastAnswer(path)).body).data.ownerAddress).toBe(ADDR.alice);
    const id = t.ids.get("alice-fns-polygon") as number;
    const domain = await t.store.domainMap.findDomainById(id);
    if (domain === null) throw new Error("no alice-fns-polygon");
    await t.store.domainMap.upsertDomain({ ...domain, owner: ADDR.carol });
    expect(JSON.parse((await get(path)).body).data.ownerAddress).toBe(ADDR.carol);
    await t.store.domainMap.upsertDomain({ ...domain, owner: ADDR.alice });
    expect(JSON.parse((await get(path)).body).data.ownerAddress).toBe(ADDR.alice);
  });

  it("a settings change followed at once by a request gets the new answer", async () => {
    const path = `${V1}/resolve?domain=alice.wallet`;
    await freshRate();
    expect(JSON.parse((await fastAnswer(path)).body).data.network).toBe("POLYGON");
    await t.services.projects.putSettings(t.projectId, { networks: { disabled: ["POLYGON"] } });
    expect(JSON.parse((await get(path)).body).data.network).not.toBe("POLYGON");
    await t.services.projects.putSettings(t.projectId, {});
    expect(JSON.parse((await get(path)).body).data.network).toBe("POLYGON");
  });

  it("refuses a key revoked in the console at once, and a caller an allowlist leaves out", async () => {
    const path = `${V1}/resolve?domain=alice.wallet`;
    const { key, apiKey } = await createApiKey(t.store, t.ctx.pepper, t.projectId, "revoked here");
    await freshRate();
    await fastAnswer(path, {}, key);
    await t.services.projects.keys.revoke(t.projectId, apiKey.id);
    const revoked = await get(path, {}, key);
    expect(revoked.status).toBe(401);
    expect(JSON.parse(revoked.body).error.code).toBe("API_KEY_INVALID");

    await fastAnswer(path);
    await t.services.projects.putSecurity(t.projectId, { allowedIps: ["192.0.2.0/24"], allowedOrigins: [] });
    const outside = await get(path);
    expect(outside.status).toBe(403);
    expect(JSON.parse(outside.body).error.code).toBe("IP_NOT_ALLOWED");
    await t.services.projects.putSecurity(t.projectId, { allowedIps: [], allowedOrigins: [] });
    expect((await get(path)).status).toBe(200);
  });

  it("leaves a browser's request (Origin) to the hooks, which add the CORS headers", async () => {
    const path = `${V1}/resolve?domain=alice.wallet`;
    await freshRate();
    await fastAnswer(path);
    const before = await fast();
    const browser = await get(path, { origin: "https://wallet.example" });
    expect(browser.status).toBe(200);
    expect(browser.headers["access-control-allow-origin"]).toBe("https://wallet.example");
    expect(await fast()).toBe(before);
  });
});
