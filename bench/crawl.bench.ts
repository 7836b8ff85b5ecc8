// Crawl throughput against a bare eth_getLogs fetch of the same ranges, in the same run.
//
//   npx tsx bench/crawl.bench.ts [--names 50000] [--batch 250] [--decode-worker 1] [--ethereum 1]
//                                [--postgres 1] [--cache 1] [--rebuild 0]
//
// Seeds a bulk world on a local POLYGON devnet (UNS and FNS, ~4 events a name: 50,000 names ≈
// 200,000 events) with the registries' own entry points, then (1) fetches every log of every
// source with raw eth_getLogs over adaptive ranges, without decoding or storing, and (2) crawls the
// same chain into a fresh store (SQLite, or with `--postgres 1` a fresh PostgreSQL database on
// 127.0.0.1:5432, user postgres, dropped afterwards): decode, journal, projection, scoring,
// checkpoints. Prints one JSON line; `ratio` = crawl events/s ÷ bare fetch events/s, `peakRssMb` the
// process's peak RSS (process.resourceUsage().maxRSS), `rssMb` the RSS sampled during the crawl.
// `--ethereum 1` seeds the ETHEREUM devnet instead: UNS and the real ENS contracts (one controller
// commit + register a name, ~10 events a name).
//
// The seeded chain is kept (src/devnet/state-cache.ts) under BENCH_CACHE_DIR (default
// <os tmpdir>/omniname-bench-cache): the next run with the same options loads it in seconds.
// `--cache 0` seeds a throw-away world, `--rebuild 1` seeds and replaces the cached one.
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { crawlSignals } from "../src/cli/crawler-role.js";
import { loadConfig } from "../src/config/load-config.js";
import { AdaptiveRange } from "../src/crawler/block-range.js";
import { createCrawler } from "../src/crawler/crawler.js";
import { createCrawlerMetrics } from "../src/crawler/crawler-metrics.js";
import { partsAhead } from "../src/crawler/range-fetch.js";
import { startLogDecoder } from "../src/crawler/decode-pool.js";
import { sourcesFromManifest } from "../src/devnet/manifest.js";
import { startCachedWorld } from "../src/devnet/state-cache.js";
import type { LogFilter } from "../src/providers/provider.js";
import { loadScoringLists } from "../src/scoring/scoring-lists.js";
import { createPostgresStore } from "../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { numberArg } from "./support/args.js";
import { cpuSecondsOf } from "./support/measure.js";
import { pgAdmin, pgDatabaseUrl } from "./support/pg-copy.js";

const NAMES = numberArg("names", 50_000);
const BATCH = numberArg("batch", 250);
// 0: parse and decode on the main thread, as without the decode worker (comparisons).
const DECODE_WORKER = numberArg("decode-worker", 1) !== 0;
const MAX_RANGE = 100_000;
const NETWORK = numberArg("ethereum", 0) !== 0 ? "ETHEREUM" : "POLYGON";
const POSTGRES = numberArg("postgres", 0) !== 0;

const dir = mkdtempSync(join(tmpdir(), "omniname-bench-"));
const log = (m: string) => process.stderr.write(`${m}\n`);
const world = await startCachedWorld({
  network: NETWORK,
  names: NAMES,
  batchSize: BATCH,
  runId: "bench",
  basePort: 41_000,
  rebuild: numberArg("rebuild", 0) !== 0,
  cacheDir: numberArg("cache", 1) === 0 ? join(dir, "world") : undefined,
  log,
});
const pgDatabase = `omniname_crawl_bench_${process.pid}`;
try {
  const { seeded } = world;
  log(
    `${world.cached ? "loaded" : "seeded"} the world in ${(world.readyMs / 1000).toFixed(1)} s: ${seeded.names} names, ${seeded.events} events in ${seeded.blocks} blocks (state ${(world.stateBytes / 2 ** 20).toFixed(0)} MB)`,
  );
  const { rpcUrl } = world;
  const sources = sourcesFromManifest(world.manifest);
  const head = Number(
    await (
      await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
      })
    )
      .json()
      .then((r) => (r as { result: string }).result),
  );

  // (1) Bare fetch: the same filters, ranges and parts (a few in flight, as the crawler keeps
  // them), raw JSON parsed, nothing decoded or stored.
  let bareLogs = 0;
  const getLogs = async (from: number, to: number, f: LogFilter) => {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_getLogs",
        params: [
          {
            fromBlock: `0x${from.toString(16)}`,
            toBlock: `0x${to.toString(16)}`,
            ...(f.address ? { address: f.address } : {}),
            topics: [f.topic0],
          },
        ],
      }),
    });
    return ((await res.json()) as { result: unknown[] }).result.length;
  };
  // The CPU of the node (anvil on this chain's port) and of the PostgreSQL server (every process
  // titled `postgres`, background ones included) during each phase: with the crawler's own, what
  // the crawl asks of the machine's cores (`ceiling` below).
  const port = new URL(rpcUrl).port;
  const nodeCpu = () => cpuSecondsOf((c) => c.includes("anvil") && c.includes(`--port ${port} `));
  const serverCpu = () => cpuSecondsOf((c) => c.startsWith("postgres"));
  const nodeBeforeBare = nodeCpu();
  const bareStarted = performance.now();
  await Promise.all(
    sources.map(async (s) => {
      const range = new AdaptiveRange({ initial: 2_000, max: MAX_RANGE });
      const filters = s.adapter.filters(s.contracts);
      const ahead = partsAhead(filters.length);
      for (let from = s.contracts.startBlock; from <= head; ) {
        const to = Math.min(head, from + range.size - 1);
        let n = 0;
        const inFlight: Array<Promise<number>> = [];
        for (let next = from; next <= to || inFlight.length > 0; ) {
          while (next <= to && inFlight.length < (range.hasDensity ? ahead : 1)) {
            const a = next;
            const b = a + range.partBlocks(to - a + 1) - 1;
            next = b + 1;
            inFlight.push(
              Promise.all(filters.map((f) => getLogs(a, b, f))).then((c) => {
                const logs = c.reduce((x, y) => x + y, 0);
                range.observed(b - a + 1, logs);
                return logs;
              }),
            );
          }
          n += await (inFlight.shift() as Promise<number>);
        }
        bareLogs += n;
        range.succeeded(to - from + 1, n);
        from = to + 1;
      }
    }),
  );
  const bareSeconds = (performance.now() - bareStarted) / 1000;
  const nodeBareCpu = nodeCpu() - nodeBeforeBare;

  // (2) The crawler, as `omniname crawl` runs it (scoring included).
  let store: ReturnType<typeof createSqliteStore> | ReturnType<typeof createPostgresStore>;
  if (POSTGRES) {
    await pgAdmin(`create database ${pgDatabase}`);
    store = createPostgresStore(pgDatabaseUrl(pgDatabase));
  } else store = createSqliteStore(join(dir, "bench.db"));
  await store.migrate();
  const signals = crawlSignals(
    await loadScoringLists(loadConfig({}, { dataDir: dir }), await store.scoring.findKycOwners()),
  );
  const crawler = createCrawler({
    sources,
    store,
    logger: pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2)),
    metrics: createCrawlerMetrics(new Registry()),
    sync: {
      pollIntervalMs: 50,
      maxRange: MAX_RANGE,
      initialRange: 2_000,
      requestTimeoutMs: 60_000,
      exitWhenSynced: true,
      decodeInWorker: DECODE_WORKER,
    },
    finalityOf: () => 200,
    signals,
  });
  // The decode worker loads its modules once per process, as the main thread loaded its own before
  // the clock starts: a long-running crawler pays that once, not per range.
  if (DECODE_WORKER) await startLogDecoder();
  // RSS every 250 ms during the crawl: flat when the ranges in flight are bounded.
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(process.memoryUsage.rss()), 250);
  const cpuBefore = process.cpuUsage();
  const nodeBeforeCrawl = nodeCpu();
  const serverBeforeCrawl = serverCpu();
  const crawlStarted = performance.now();
  crawler.start();
  await crawler.done();
  const crawlSeconds = (performance.now() - crawlStarted) / 1000;
  // CPU of this process (main thread and decode worker) per event: the crawler's own work, much
  // less sensitive than wall time to what else the cores run.
  const cpu = process.cpuUsage(cpuBefore);
  const nodeCrawlCpu = nodeCpu() - nodeBeforeCrawl;
  const serverCrawlCpu = POSTGRES ? serverCpu() - serverBeforeCrawl : 0;
  clearInterval(sampler);
  const crawled = crawler.status().reduce((n, s) => n + s.eventsApplied, 0);
  const domains = await store.domainMap.countDomains();
  await store.close();

  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  const quart = (q: number) => mb(rss[Math.min(rss.length - 1, Math.floor(q * (rss.length - 1)))] ?? 0);
  const bareRate = bareLogs / bareSeconds;
  const crawlRate = crawled / crawlSeconds;
  process.stdout.write(
    `${JSON.stringify({
      bench: "crawl",
      store: POSTGRES ? "postgres" : "sqlite",
      world: world.cached ? "cached" : "seeded",
      worldSeconds: +(world.readyMs / 1000).toFixed(1),
      events: crawled,
      bareLogs,
      domains,
      bareSeconds: +bareSeconds.toFixed(2),
      crawlSeconds: +crawlSeconds.toFixed(2),
      bareEventsPerSecond: Math.round(bareRate),
      crawlEventsPerSecond: Math.round(crawlRate),
      ratio: +(crawlRate / bareRate).toFixed(2),
      cpuMicrosPerEvent: +((cpu.user + cpu.system) / crawled).toFixed(1),
      // CPU seconds of each phase: the node's in the bare fetch; the crawler's own (this process),
      // the node's and the database server's in the crawl.
      cpuSeconds: {
        bareNode: +nodeBareCpu.toFixed(2),
        crawler: +((cpu.user + cpu.system) / 1e6).toFixed(2),
        crawlNode: +nodeCrawlCpu.toFixed(2),
        crawlServer: +serverCrawlCpu.toFixed(2),
      },
      // The best ratio these cores allow this crawler: the crawl cannot take less than its CPU (the
      // crawler's, the node's and the server's) spread over every core, against the bare fetch's
      // wall time. 0.7 is out of reach while this is below it.
      ceiling: +(
        bareSeconds /
        (((cpu.user + cpu.system) / 1e6 + nodeCrawlCpu + serverCrawlCpu) / availableParallelism())
      ).toFixed(2),
      // maxRSS is in KiB.
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      // RSS during the crawl at 10%, 50%, 90% of it and its maximum.
      rssMb: { p10: quart(0.1), p50: quart(0.5), p90: quart(0.9), max: mb(Math.max(0, ...rss)) },
      loadAverage: (await import("node:os")).loadavg().map((l) => +l.toFixed(2)),
    })}\n`,
  );
} finally {
  await world.stop();
  if (POSTGRES) {
    await pgAdmin(`drop database if exists ${pgDatabase} with (force)`);
  }
  rmSync(dir, { recursive: true, force: true });
}
