import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiRoleEnv,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from "../helpers/server-process.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";
const DASHBOARD = new URL("../../docs/grafana/omniname-api.json", import.meta.url);

/** Metric names a Prometheus text exposition declares (`# TYPE`), histograms with their series. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(m[1]);
    if (m[2] === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(`${m[1]}${s}`);
  }
  return names;
}

/** `name{a="x",b="y"} value` → value, for the sample whose labels include all of `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number | null {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.split(" ").pop());
  }
  return null;
}

function dashboardQueries(): string[] {
  const dash = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
    panels: Array<{ targets?: Array<{ expr: string }> }>;
    templating: { list: Array<{ definition?: string }> };
  };
  return [
    ...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...dash.templating.list.flatMap((v) => (v.definition ? [v.definition] : [])),
  ];
}

describe("API metrics on /metrics", () => {
  let t: TestApp;
  const registry = new Registry();
  const PLANS = JSON.stringify({
    free: { rps: 10, monthlyQuota: 100_000, maxProjects: 3, maxKeys: 5, maxMembers: 5 },
    tiny: { rps: 1, rateWindowS: 1, monthlyQuota: 1_000, maxProjects: 1, maxKeys: 1, maxMembers: 1 },
  });
  beforeAll(async () => {
    t = await createTestApp({
      env: { PLANS, DEFAULT_PLAN: "free" },
      plan: "tiny",
      app: { metricsRegistry: registry },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("counts requests and latency per route pattern and status, refusals per reason, batch sizes and cache lookups", async () => {
    const batch = await t.app.inject({
      method: "POST",
      url: `${V1}/batch/deep-resolve`,
      headers: { "api-key": t.key, "content-type": "application/json" },
      payload: { domains: ["alice.wallet", "bob.eth", "carol.wallet"] },
    });
    expect(batch.statusCode).toBe(429); // 3 names do not fit the window: refused whole
    expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(200);
    expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(429); // 1 a second
    expect((await t.app.inject(`${V1}/resolve?domain=bob.eth`)).statusCode).toBe(401);
    expect((await t.app.inject("/no/such/path?x=1")).statusCode).toBe(404);
    const text = await registry.metrics();

    const resolve = { route: `${V1}/resolve`, method: "GET" };
    expect(sample(text, "omniname_api_requests_total", { ...resolve, status: "200" })).toBe(1);
    expect(sample(text, "omniname_api_requests_total", { ...resolve, status: "429" })).toBe(1);
    expect(sample(text, "omniname_api_requests_total", { ...resolve, status: "401" })).toBe(1);
    expect(sample(text, "omniname_api_request_duration_seconds_count", { ...resolve, status: "200" })).toBe(
      1,
    );
    expect(sample(text, "omniname_api_requests_total", { route: "unmatched", status: "404" })).toBe(1);
    expect(sample(text, "omniname_api_refusals_total", { reason: "rate" })).toBe(2);
    expect(sample(text, "omniname_api_refusals_total", { reason: "key" })).toBe(1);
    expect(sample(text, "omniname_api_refusals_total", { reason: "quota" })).toBe(0);
    expect(sample(text, "omniname_api_refusals_total", { reason: "allowlist" })).toBe(0);
    // An allowlist that excludes the caller (inject's 127.0.0.1): refused before the body is read.
    await t.services.projects.putSecurity(t.projectId, { allowedIps: ["192.0.2.0/24"], allowedOrigins: [] });
    const refused = await t.app.inject({
      method: "POST",
      url: `${V1}/batch/resolve`,
      headers: { "api-key": t.key, "content-type": "application/json" },
      payload: "{not json",
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe("IP_NOT_ALLOWED");
    expect(sample(await registry.metrics(), "omniname_api_refusals_total", { reason: "allowlist" })).toBe(1);
    expect(sample(text, "omniname_api_batch_inputs_sum", { route: `${V1}/batch/deep-resolve` })).toBe(3);
    expect(sample(text, "omniname_api_answer_cache_lookups_total", { result: "miss" })).toBeGreaterThan(0);
    expect(sample(text, "omniname_api_usage_flush_lag_seconds", {})).toBeGreaterThan(0);
    // Bounded labels: no URL, query string or name reaches a label.
    expect(text).not.toContain("/no/such/path");
    expect(text).not.toContain("alice.wallet");
    await t.services.usage.flush();
    expect(sample(await registry.metrics(), "omniname_api_usage_flush_lag_seconds", {})).toBe(0);
  });
});

describe("the Grafana dashboard (docs/grafana/omniname-api.json)", () => {
  let server: ServerProcess;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-metrics-"));
    server = await startServerProcess(apiRoleEnv(dir, { DATABASE_URL: "" }), ["--fixtures"]);
  }, 90_000);
  afterAll(async () => {
    if (server) await stopServerProcess(server);
    rmSync(dir, { recursive: true, force: true });
  });

  it("queries only metrics that a real server exports, and shows every API metric", async () => {
    const key = /demo API key:\s+(\S+)/.exec(server.output())?.[1] ?? "";
    await fetch(`${server.url}${V1}/resolve?domain=alice.wallet`, { headers: { "api-key": key } });
    const batch = await fetch(`${server.url}${V1}/batch/reverse-resolve`, {
      method: "POST",
      headers: { "api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ walletAddresses: ["0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "0x1"] }),
    });
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as { data: Array<{ result: boolean }> }).data.map((d) => d.result)).toEqual([
      true,
      false,
    ]);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(sample(text, "omniname_api_batch_inputs_sum", { route: `${V1}/batch/reverse-resolve` })).toBe(2);
    expect(sample(text, "omniname_api_requests_total", { route: `${V1}/resolve`, status: "200" })).toBe(1);
    const exported = exportedNames(text);
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(8);
    const used = new Set<string>();
    for (const q of queries) {
      const names = [...q.matchAll(/\bomniname_[a-z_]+\b/g)].map((m) => m[0]);
      expect(names.length, q).toBeGreaterThan(0);
      for (const n of names) {
        expect(exported.has(n), `${n} (in ${q}) is not exported`).toBe(true);
        used.add(n.replace(/_(bucket|sum|count)$/, ""));
      }
    }
    const apiMetrics = [...exported].filter(
      (n) => n.startsWith("omniname_api_") && !/_(bucket|sum|count)$/.test(n),
    );
    expect(apiMetrics.length).toBe(7);
    for (const n of apiMetrics) expect(used.has(n), `${n} is on no panel`).toBe(true);
  });
});
