import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKeyRequests, loadQuotaUsed, loadUsage, UsageRecorder } from "../../src/accounts/usage.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/pg.js";

describe.each(["sqlite", "postgres"] as const)("usage counters on %s", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    if (backend === "postgres") {
      const db = await createTestDatabase();
      store = await createStore({ databaseUrl: db.url, dataDir: "." });
      cleanup = db.drop;
    } else {
      const dir = mkdtempSync(join(tmpdir(), "omniname-usage-"));
      store = await createStore({ databaseUrl: undefined, dataDir: dir });
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
  });
  afterAll(async () => {
    await store?.close();
    await cleanup?.();
  });

  it("adds up batches flushed by several processes, and reads back 30 days with percentiles", async () => {
    const logger = pino({ level: "silent" });
    const touched: Array<Map<number, number>> = [];
    const a = new UsageRecorder(store.accounts, logger, 60_000, async (m) => {
      touched.push(m);
    });
    const b = new UsageRecorder(store.accounts, logger, 60_000);
    const day = Date.UTC(2026, 10, 21, 10);
    const yesterday = day - 86_400_000;
    // 100 requests: latencies 1..100 ms, every tenth a 404, split over two recorders and two flushes each.
    for (let i = 1; i <= 100; i++) {
      const r = i % 2 ? a : b;
      r.record({
        projectId: 9,
        keyId: 3,
        endpoint: "resolve",
        status: i % 10 === 0 ? 404 : 200,
        latencyMs: i,
        quota: true,
        at: day,
      });
      if (i === 50) await Promise.all([a.flush(), b.flush()]);
    }
    a.record({
      projectId: 9,
      endpoint: "reverse-resolve",
      status: 429,
      latencyMs: 0.2,
      quota: false,
      at: yesterday,
    });
    await Promise.all([a.flush(), b.flush()]);
    // The keys' last use went out with each batch.
    expect(touched.map((m) => m.get(3))).toEqual([day, day]);

    const u = await loadUsage(store.accounts, 9, day, 30);
    expect(u.days).toHaveLength(30);
    expect(u.to).toBe("2026-11-21");
    const today = u.days.at(-1)!;
    expect(today.requests).toBe(100);
    expect(today.errors).toBe(10);
    expect(today.byStatus).toEqual({ "404": 10 });
    // 50% of the samples are <= 50 ms → the 50 ms bucket; 95% <= 95 → the 100 ms bucket.
    expect(today.latencyMs).toEqual({ p50: 50, p95: 100, p99: 100 });
    expect(u.days.at(-2)).toMatchObject({ requests: 1, byStatus: { "429": 1 }, latencyMs: { p50: 0.5 } });
    expect(u.totals.requests).toBe(101);
    expect(u.endpoints.map((e) => e.endpoint)).toEqual(["resolve", "reverse-resolve"]);
    expect(await loadQuotaUsed(store.accounts, 9, Date.UTC(2026, 10, 1), Date.UTC(2026, 11, 1))).toBe(100);
    expect(await loadQuotaUsed(store.accounts, 9, Date.UTC(2026, 9, 1), Date.UTC(2026, 10, 1))).toBe(0);
    // Per key and month, from the same batches: both recorders' requests of key 3 add up.
    expect(await loadKeyRequests(store.accounts, 9, "2026-11")).toEqual(new Map([[3, 100]]));
    expect(await loadKeyRequests(store.accounts, 9, "2026-10")).toEqual(new Map());
  });

  it("keeps the counts of a failed flush for the next one", async () => {
    const r = new UsageRecorder(store.accounts, pino({ level: "silent" }), 60_000);
    r.record({
      projectId: 11,
      keyId: 12,
      endpoint: "resolve",
      status: 200,
      latencyMs: 1,
      quota: true,
      at: Date.UTC(2026, 0, 1),
    });
    // A real failure: the table is away while the first flush runs.
    await sql`alter table usage_counters rename to usage_counters_away`.execute(store.accounts);
    try {
      await expect(r.flush()).rejects.toThrow();
    } finally {
      await sql`alter table usage_counters_away rename to usage_counters`.execute(store.accounts);
    }
    await r.flush();
    expect(await loadQuotaUsed(store.accounts, 11, Date.UTC(2026, 0, 1), Date.UTC(2026, 1, 1))).toBe(1);
    // The key's count rolled back with the batch and went out with the next one, once.
    expect(await loadKeyRequests(store.accounts, 11, "2026-01")).toEqual(new Map([[12, 1]]));
  });
});
