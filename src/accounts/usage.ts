import { sql } from "kysely";
import type { Logger } from "pino";
import { createFailureStreak } from "../domain/failure-streak.js";
import type { AccountsDb } from "../store/accounts.port.js";
import type { Database } from "../store/schema.js";

/**
 * Upper bounds (ms) of the latency histogram. Percentiles are reported as the bound of the bucket
 * they fall in: an over-estimate by at most one bucket (~1.5×), which is what a chart needs and
 * what additive counters can store.
 */
const LATENCY_BUCKETS_MS = [
  0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000, 5000, 10000,
] as const;

interface UsageEvent {
  projectId: number;
  endpoint: string;
  status: number;
  latencyMs: number;
  /** The request counted against the monthly quota. */
  quota: boolean;
  /**
   * A batch call: the names or addresses it was charged for (0 when its body was refused: then it
   * counted as one request, if at all).
   * Undefined for single requests, which count as one name each.
   */
  batchInputs?: number | undefined;
  at: number;
}

const DAY_MS = 86_400_000;

// The day of the last call and its bounds: every request records its day, and an ISO string
// per request cost more than the counting itself.
let lastDay = { startMs: 0, endMs: 0, key: "" };

export function dayOf(ms: number): string {
  const d = lastDay;
  if (ms >= d.startMs && ms < d.endMs) return d.key;
  const key = new Date(ms).toISOString().slice(0, 10);
  // Only times with a four-digit year are cached (toISOString's plain form), as every real one.
  if (key.length === 10) {
    const startMs = Math.floor(ms / DAY_MS) * DAY_MS;
    lastDay = { startMs, endMs: startMs + DAY_MS, key };
  }
  return key;
}

export function latencyBucket(ms: number): string {
  for (const b of LATENCY_BUCKETS_MS) if (ms <= b) return String(b);
  return "inf";
}

/** `lat:<bucket>` for each bucket, then `lat:inf`: the metric names record() counts into. */
const LATENCY_METRICS = [...LATENCY_BUCKETS_MS.map((b) => `lat:${b}`), "lat:inf"];

function latencyMetric(ms: number): string {
  for (let i = 0; i < LATENCY_BUCKETS_MS.length; i++)
    if (ms <= LATENCY_BUCKETS_MS[i]) return LATENCY_METRICS[i];
  return LATENCY_METRICS[LATENCY_BUCKETS_MS.length];
}

type Pending = Map<string, Map<string, number>>;

/**
 * Usage counters per project, UTC day and endpoint, kept in memory and written in batches every
 * `flushMs` (and on close): never one write per request. Each flush is a handful of additive
 * upserts (`count = count + excluded.count`), so several processes flushing into one PostgreSQL
 * database add up correctly. A failed flush puts its counts back for the next one.
 */
export class UsageRecorder {
  private pending: Pending = new Map();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** Failed flushes in a row: an outage's first is logged, and the flush that works again. */
  private readonly flushFailures = createFailureStreak();
  private readonly touchFailures = createFailureStreak();

  private lastUsed = new Map<number, number>();
  /** Requests per key and UTC month, `keyId|projectId|YYYY-MM` → count (table api_key_usage). */
  private keyRequests = new Map<string, number>();
  /** Date.now() of the first count recorded since the last successful flush, or null. */
  private oldestPendingAt: number | null = null;

  constructor(
    private readonly db: AccountsDb,
    private readonly logger: Logger,
    private readonly flushMs: number,
    /** Writes the API keys' last-use times (Store.touchApiKeys), batched with the counters. */
    private readonly touchKeys: (lastUsed: Map<number, number>) => Promise<void> = async () => {},
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.flush().catch(() => {});
    }, this.flushMs);
    this.timer.unref();
  }

  private add(key: string, metric: string, n: number): void {
    let m = this.pending.get(key);
    if (!m) {
      m = new Map();
      this.pending.set(key, m);
    }
    m.set(metric, (m.get(metric) ?? 0) + n);
  }

  /** Hot path: a few map increments. */
  record(e: UsageEvent & { keyId?: number }): void {
    const day = dayOf(e.at);
    if (e.keyId !== undefined) {
      this.lastUsed.set(e.keyId, e.at);
      const k = `${e.keyId}|${e.projectId}|${day.slice(0, 7)}`;
      this.keyRequests.set(k, (this.keyRequests.get(k) ?? 0) + 1);
    }
    const key = `${e.projectId}|${day}|${e.endpoint}`;
    this.add(key, "requests", 1);
    if (e.status >= 400) this.add(key, `status:${e.status}`, 1);
    this.add(key, latencyMetric(e.latencyMs), 1);
    if (e.batchInputs === undefined) {
      if (e.quota) this.add(key, "quota", 1);
    } else {
      // A batch is one request of many names: "batch" counts calls, "names" their inputs.
      this.add(key, "batch", 1);
      if (e.batchInputs > 0) this.add(key, "names", e.batchInputs);
      // A call refused for its body counted as one request (batchInputs 0).
      if (e.quota) this.add(key, "quota", Math.max(1, e.batchInputs));
    }
    if (this.oldestPendingAt === null) this.oldestPendingAt = Date.now();
  }

  /**
   * Seconds the oldest count not yet written has waited (0 when everything is written): the
   * usage-flush lag of the API metrics. Wall-clock, whatever clock the requests are stamped with.
   */
  flushLagSeconds(): number {
    return this.oldestPendingAt === null ? 0 : (Date.now() - this.oldestPendingAt) / 1000;
  }

  /** Drops the unflushed counts of a deleted project. */
  forgetProject(projectId: number): void {
    for (const k of this.pending.keys()) if (k.startsWith(`${projectId}|`)) this.pending.delete(k);
    for (const k of this.keyRequests.keys())
      if (k.split("|")[1] === String(projectId)) this.keyRequests.delete(k);
  }

  /** Writes the pending counts in one transaction; concurrent calls run one after another. */
  flush(): Promise<void> {
    // A failed flush must not stop the chain: the next one retries its counts.
    const next = this.flushing.catch(() => {}).then(() => this.flushNow());
    this.flushing = next;
    return next;
  }

  private async flushNow(): Promise<void> {
    if (this.lastUsed.size > 0) {
      const touched = this.lastUsed;
      this.lastUsed = new Map();
      await this.touchKeys(touched).then(
        () => void this.touchFailures.succeeded(),
        (e: unknown) => {
          for (const [id, at] of touched) if (!this.lastUsed.has(id)) this.lastUsed.set(id, at);
          if (this.touchFailures.failed())
            this.logger.warn(
              { err: e },
              "writing API keys' last use failed; kept for the next flush (logged once until it works)",
            );
        },
      );
    }
    if (this.pending.size === 0 && this.keyRequests.size === 0) {
      this.oldestPendingAt = null;
      return;
    }
    const batch = this.pending;
    const keyBatch = this.keyRequests;
    const since = this.oldestPendingAt;
    this.pending = new Map();
    this.keyRequests = new Map();
    this.oldestPendingAt = null;
    const rows: Array<Database["usage_counters"]> = [];
    for (const [key, metrics] of batch) {
      const [projectId, day, endpoint] = key.split("|");
      for (const [metric, count] of metrics)
        rows.push({ project_id: Number(projectId), day, endpoint, metric, count });
    }
    try {
      await this.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += 200) {
          await trx
            .insertInto("usage_counters")
            .values(rows.slice(i, i + 200))
            .onConflict((oc) =>
              oc
                .columns(["project_id", "day", "endpoint", "metric"])
                .doUpdateSet({ count: sql<number>`usage_counters.count + excluded.count` }),
            )
            .execute();
        }
        const keyRows = [...keyBatch].map(([k, requests]) => {
          const [keyId, projectId, month] = k.split("|");
          return { key_id: Number(keyId), project_id: Number(projectId), month, requests };
        });
        for (let i = 0; i < keyRows.length; i += 200) {
          await trx
            .insertInto("api_key_usage")
            .values(keyRows.slice(i, i + 200))
            .onConflict((oc) =>
              oc
                .columns(["key_id", "month"])
                .doUpdateSet({ requests: sql<number>`api_key_usage.requests + excluded.requests` }),
            )
            .execute();
        }
      });
    } catch (e) {
      for (const [key, metrics] of batch) for (const [metric, n] of metrics) this.add(key, metric, n);
      for (const [k, n] of keyBatch) this.keyRequests.set(k, (this.keyRequests.get(k) ?? 0) + n);
      if (since !== null && (this.oldestPendingAt === null || since < this.oldestPendingAt))
        this.oldestPendingAt = since;
      if (this.flushFailures.failed())
        this.logger.warn(
          { err: e, rows: rows.length },
          "usage flush failed; counts kept for the next flush (logged once until a flush works)",
        );
      throw e;
    }
    const ended = this.flushFailures.succeeded();
    if (ended !== null)
      this.logger.warn(
        { failedFlushes: ended.failures, outageMs: ended.ms, rows: rows.length },
        "usage flush works again: the kept counts are written",
      );
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush().catch(() => {});
  }
}

/** Requests of each key of a project in a UTC month (`YYYY-MM`), flushed counts only. */
export async function loadKeyRequests(db: AccountsDb, projectId: number, month: string) {
  const rows = await db
    .selectFrom("api_key_usage")
    .select(["key_id", "requests"])
    .where("project_id", "=", projectId)
    .where("month", "=", month)
    .execute();
  return new Map(rows.map((r) => [Number(r.key_id), Number(r.requests)]));
}

/** Requests of a project that counted against its quota between two times (month start and end). */
export async function loadQuotaUsed(
  db: AccountsDb,
  projectId: number,
  fromMs: number,
  toMs: number,
): Promise<number> {
  const r = await db
    .selectFrom("usage_counters")
    .select((eb) => eb.fn.sum<number>("count").as("n"))
    .where("project_id", "=", projectId)
    .where("metric", "=", "quota")
    .where("day", ">=", dayOf(fromMs))
    .where("day", "<", dayOf(toMs))
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

interface UsageStats {
  requests: number;
  /** Names and addresses asked: one per single request, the inputs of each batch call. */
  names: number;
  /** Batch calls among the requests. */
  batches: number;
  errors: number;
  byStatus: Record<string, number>;
  latencyMs: { p50: number; p95: number; p99: number } | null;
}

function percentile(hist: Map<string, number>, total: number, q: number): number {
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (const b of [...LATENCY_BUCKETS_MS.map(String), "inf"]) {
    seen += hist.get(b) ?? 0;
    if (seen >= rank) return b === "inf" ? Number.POSITIVE_INFINITY : Number(b);
  }
  return Number.POSITIVE_INFINITY;
}

class Acc {
  requests = 0;
  batches = 0;
  batchNames = 0;
  byStatus: Record<string, number> = {};
  hist = new Map<string, number>();

  add(metric: string, n: number): void {
    if (metric === "requests") this.requests += n;
    else if (metric === "batch") this.batches += n;
    else if (metric === "names") this.batchNames += n;
    else if (metric.startsWith("status:")) {
      const s = metric.slice(7);
      this.byStatus[s] = (this.byStatus[s] ?? 0) + n;
    } else if (metric.startsWith("lat:")) {
      const b = metric.slice(4);
      this.hist.set(b, (this.hist.get(b) ?? 0) + n);
    }
  }

  stats(): UsageStats {
    let samples = 0;
    for (const n of this.hist.values()) samples += n;
    const cap = (v: number) =>
      Number.isFinite(v) ? v : LATENCY_BUCKETS_MS[LATENCY_BUCKETS_MS.length - 1] * 2;
    return {
      requests: this.requests,
      names: this.requests - this.batches + this.batchNames,
      batches: this.batches,
      errors: Object.values(this.byStatus).reduce((a, b) => a + b, 0),
      byStatus: this.byStatus,
      latencyMs:
        samples === 0
          ? null
          : {
              p50: cap(percentile(this.hist, samples, 0.5)),
              p95: cap(percentile(this.hist, samples, 0.95)),
              p99: cap(percentile(this.hist, samples, 0.99)),
            },
    };
  }
}

/** The last `days` UTC days of a project, every day present (zero when idle), oldest first. */
export async function loadUsage(db: AccountsDb, projectId: number, now: number, days = 30) {
  const dayList: string[] = [];
  for (let i = days - 1; i >= 0; i--) dayList.push(dayOf(now - i * 86_400_000));
  const rows = await db
    .selectFrom("usage_counters")
    .select(["day", "endpoint", "metric", "count"])
    .where("project_id", "=", projectId)
    .where("day", ">=", dayList[0])
    .where("day", "<=", dayList[dayList.length - 1])
    .execute();
  const perDay = new Map(dayList.map((d) => [d, { all: new Acc(), byEndpoint: new Map<string, Acc>() }]));
  const perEndpoint = new Map<string, Acc>();
  const total = new Acc();
  for (const r of rows) {
    const d = perDay.get(r.day);
    if (!d) continue;
    const n = Number(r.count);
    d.all.add(r.metric, n);
    total.add(r.metric, n);
    if (!d.byEndpoint.has(r.endpoint)) d.byEndpoint.set(r.endpoint, new Acc());
    d.byEndpoint.get(r.endpoint)!.add(r.metric, n);
    if (!perEndpoint.has(r.endpoint)) perEndpoint.set(r.endpoint, new Acc());
    perEndpoint.get(r.endpoint)!.add(r.metric, n);
  }
  return {
    from: dayList[0],
    to: dayList[dayList.length - 1],
    totals: total.stats(),
    endpoints: [...perEndpoint.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([endpoint, a]) => ({ endpoint, ...a.stats() })),
    days: dayList.map((day) => {
      const d = perDay.get(day)!;
      return {
        day,
        ...d.all.stats(),
        byEndpoint: Object.fromEntries([...d.byEndpoint.entries()].map(([e, a]) => [e, a.stats()])),
      };
    }),
  };
}
