import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** Why the API refused a request before answering it: the reasons of the refusals counter. */
const REFUSAL_REASONS: Record<string, "key" | "allowlist" | "rate" | "quota" | "store"> = {
  API_KEY_MISSING: "key",
  API_KEY_INVALID: "key",
  IP_NOT_ALLOWED: "allowlist",
  ORIGIN_NOT_ALLOWED: "allowlist",
  RATE_LIMITED: "rate",
  QUOTA_EXCEEDED: "quota",
  STORE_UNAVAILABLE: "store",
};

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Latencies of one route's 200 GET answers not yet in the histogram, per bucket (the last: above all). */
interface PendingLatencies {
  counts: number[];
  sums: number[];
  count: number;
  sum: number;
}

function pendingLatencies(): PendingLatencies {
  const n = DURATION_BUCKETS.length + 1;
  return { counts: new Array(n).fill(0), sums: new Array(n).fill(0), count: 0, sum: 0 };
}

/** One series of prom-client's histogram as it keeps it (lib/histogram.js): per-bucket counts by upper bound. */
interface HistogramEntry {
  labels: Record<string, string>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

/**
 * Adds the fast path's pending latencies of `route` to the duration histogram, when scraped: a
 * per-request `observe` costs about a microsecond (it hashes the labels each time), a fortieth of
 * a cached answer. prom-client has no call that adds counts, so they go into its series directly;
 * should its layout ever differ, each latency is observed instead, at its bucket's mean (the
 * buckets, the count and the sum come out the same).
 */
function addLatencies(h: Histogram<"route" | "method" | "status">, route: string, p: PendingLatencies): void {
  const labels = { route, method: "GET", status: "200" };
  const map = (h as unknown as { hashMap?: Record<string, HistogramEntry> }).hashMap;
  const find = () =>
    map === undefined
      ? undefined
      : Object.values(map).find(
          (e) => e.labels?.route === route && e.labels.method === "GET" && e.labels.status === "200",
        );
  let entry = find();
  if (entry === undefined && map !== undefined) {
    h.zero(labels);
    entry = find();
  }
  if (entry !== undefined && typeof entry.bucketValues === "object") {
    DURATION_BUCKETS.forEach((bound, i) => {
      if (p.counts[i] > 0) entry.bucketValues[bound] = (entry.bucketValues[bound] ?? 0) + p.counts[i];
    });
    entry.count += p.count;
    entry.sum += p.sum;
    return;
  }
  p.counts.forEach((n, i) => {
    for (let k = 0; k < n; k++) h.observe(labels, p.sums[i] / n);
  });
}

/** The route label of requests that matched no route (404, 405): one series, whatever the URL. */
const UNMATCHED = "unmatched";

/**
 * The API's Prometheus metrics, on the registry GET /metrics serves (beside the crawler's). Labels
 * are bounded: a route is its pattern (`/svc/api/v1/resolve`), never the URL, and unmatched
 * requests share one route label; methods and statuses are the few the routes answer.
 *
 * @example
 * const metrics = createApiMetrics(registry, () => usage.flushLagSeconds());
 * installApiMetrics(app, metrics);
 */
export function createApiMetrics(registry: Registry, usageFlushLagSeconds: () => number = () => 0) {
  const registers = [registry];
  const refusals = new Counter({
    name: "omniname_api_refusals_total",
    help: "Requests refused before an answer, by reason: key (missing or invalid), allowlist, rate, quota, store (503 STORE_UNAVAILABLE)",
    labelNames: ["reason"] as const,
    registers,
  });
  for (const reason of new Set(Object.values(REFUSAL_REASONS))) refusals.inc({ reason }, 0);
  const cache = new Counter({
    name: "omniname_api_answer_cache_lookups_total",
    help: "Lookups of the memoized answer bytes of v1 records, by result (hit or miss)",
    labelNames: ["result"] as const,
    registers,
  });
  const hit = cache.labels({ result: "hit" });
  const miss = cache.labels({ result: "miss" });
  hit.inc(0);
  miss.inc(0);
  // The fast path's answers, counted in memory and added when scraped: no metric call per answer.
  let fastAnswers = 0;
  const fastByRoute = new Map<string, number>();
  const fastLatencies = new Map<string, PendingLatencies>();
  return {
    requests: new Counter({
      name: "omniname_api_requests_total",
      help: "HTTP requests answered, by route pattern, method and status",
      labelNames: ["route", "method", "status"] as const,
      registers,
      collect() {
        for (const [route, n] of fastByRoute) if (n > 0) this.inc({ route, method: "GET", status: "200" }, n);
        fastByRoute.clear();
      },
    }),
    duration: new Histogram({
      name: "omniname_api_request_duration_seconds",
      help: "Time from the request's arrival to its answer, by route pattern, method and status",
      labelNames: ["route", "method", "status"] as const,
      buckets: DURATION_BUCKETS,
      registers,
      collect() {
        for (const [route, p] of fastLatencies) if (p.count > 0) addLatencies(this, route, p);
        fastLatencies.clear();
      },
    }),
    refusals,
    batchInputs: new Histogram({
      name: "omniname_api_batch_inputs",
      help: "Names or addresses per batch call with a valid body (refused ones included), by route",
      labelNames: ["route"] as const,
      buckets: [1, 10, 50, 100, 250, 500, 750, 1000],
      registers,
    }),
    fastAnswers: new Counter({
      name: "omniname_api_fast_answers_total",
      help: "v1 answers served by the fast path: a repeated request answered from the answer cache before the framework routes it (also counted in omniname_api_requests_total)",
      registers,
      collect() {
        this.reset();
        this.inc(fastAnswers);
      },
    }),
    /** Counts one 200 answer of the fast path to a GET of `route`, and its latency (v1-fast-path.ts). */
    fastAnswer(route: string, seconds: number): void {
      fastAnswers++;
      fastByRoute.set(route, (fastByRoute.get(route) ?? 0) + 1);
      let p = fastLatencies.get(route);
      if (p === undefined) {
        p = pendingLatencies();
        fastLatencies.set(route, p);
      }
      let i = 0;
      while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]) i++;
      p.counts[i]++;
      p.sums[i] += seconds;
      p.count++;
      p.sum += seconds;
    },
    /** Counts one lookup of the answer-bytes memo (record-json.ts). */
    answerCache(found: boolean): void {
      (found ? hit : miss).inc();
    },
    usageFlushLag: new Gauge({
      name: "omniname_api_usage_flush_lag_seconds",
      help: "Age of the oldest usage count not yet written to the store (0 when all are written)",
      registers,
      collect() {
        this.set(usageFlushLagSeconds());
      },
    }),
  };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;

interface Series {
  requests: { inc(): void };
  duration: { observe(v: number): void };
}

/**
 * Counts every answer (route, method, status, latency) and every refusal. Call before any route is
 * added: each route gets its own onResponse hook that knows its pattern, so the hot path reads no
 * route options and looks up a cached series per method and status.
 */
export function installApiMetrics(app: FastifyInstance, metrics: ApiMetrics): void {
  const seriesOf = (route: string) => {
    const byKey = new Map<string, Series>();
    return (method: string, status: number): Series => {
      const key = `${method} ${status}`;
      let s = byKey.get(key);
      if (s === undefined) {
        const labels = { route, method, status: String(status) };
        s = { requests: metrics.requests.labels(labels), duration: metrics.duration.labels(labels) };
        byKey.set(key, s);
      }
      return s;
    };
  };
  const observe = (series: Series, reply: FastifyReply) => {
    series.requests.inc();
    series.duration.observe(reply.elapsedTime / 1000);
  };

  app.addHook("onRoute", (route) => {
    const series = seriesOf(route.url);
    const hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      observe(series(request.method, reply.statusCode), reply);
      done();
    };
    route.onResponse = route.onResponse === undefined ? [hook] : [...[route.onResponse].flat(), hook];
  });
  const unmatched = seriesOf(UNMATCHED);
  app.addHook("onResponse", (request, reply, done) => {
    // Matched routes count in their own hook; this one sees only what matched none.
    if (request.is404) observe(unmatched(request.method, reply.statusCode), reply);
    done();
  });
  app.addHook("onError", (_request, _reply, error, done) => {
    // The store's refusals are AppError STORE_UNAVAILABLE: each backend maps its driver's errors.
    const reason = REFUSAL_REASONS[(error as { code?: string }).code ?? ""];
    if (reason !== undefined) metrics.refusals.inc({ reason });
    done();
  });
}
