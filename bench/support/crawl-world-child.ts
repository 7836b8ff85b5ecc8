// One backfill of a bench world as its own process (bench/crawl-crash.ts): reads the world's
// manifest, crawls every source to its head into the SQLite file (or PostgreSQL URL) given, as
// `omniname crawl --exit-when-synced` does, and prints one JSON line: events, seconds, CPU µs per
// event, peak RSS and the RSS sampled every 250 ms.
//
//   node --import tsx bench/support/crawl-world-child.ts <manifest.json> <sqlite file | postgres://…>
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { crawlSignals } from "../../src/cli/crawler-role.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createCrawler } from "../../src/crawler/crawler.js";
import { createCrawlerMetrics } from "../../src/crawler/crawler-metrics.js";
import type { DevnetManifest } from "../../src/devnet/manifest.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { loadScoringLists } from "../../src/scoring/scoring-lists.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const [manifestFile, target] = process.argv.slice(2);
if (!manifestFile || !target) throw new Error("usage: crawl-world-child.ts <manifest.json> <store>");
const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as DevnetManifest;
const store = target.startsWith("postgres://") ? createPostgresStore(target) : createSqliteStore(target);
await store.migrate();
const signals = crawlSignals(
  await loadScoringLists(
    loadConfig({}, { dataDir: dirname(manifestFile) }),
    await store.scoring.findKycOwners(),
  ),
);
const crawler = createCrawler({
  sources: sourcesFromManifest(manifest),
  store,
  logger: pino({ level: "silent" }),
  metrics: createCrawlerMetrics(new Registry()),
  sync: {
    pollIntervalMs: 50,
    maxRange: 100_000,
    initialRange: 2_000,
    requestTimeoutMs: 120_000,
    exitWhenSynced: true,
    decodeInWorker: true,
  },
  finalityOf: () => 200,
  signals,
});
const rss: number[] = [];
const sampler = setInterval(() => rss.push(process.memoryUsage.rss()), 250);
const cpuBefore = process.cpuUsage();
const started = performance.now();
crawler.start();
await crawler.done();
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
clearInterval(sampler);
const events = crawler.status().reduce((n, s) => n + s.eventsApplied, 0);
await store.close();
const mb = (b: number) => Math.round(b / 2 ** 20);
const sorted = [...rss].sort((a, b) => a - b);
const q = (p: number) => mb(sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))] ?? 0);
process.stdout.write(
  `${JSON.stringify({
    events,
    seconds: +seconds.toFixed(2),
    eventsPerSecond: Math.round(events / seconds),
    cpuMicrosPerEvent: events > 0 ? +((cpu.user + cpu.system) / events).toFixed(1) : null,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    rssMb: { p10: q(0.1), p50: q(0.5), p90: q(0.9), max: q(1) },
  })}\n`,
);
