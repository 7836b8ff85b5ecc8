// Crawl throughput against a bare eth_getLogs fetch of the same ranges, in the same run.
//
//   npx tsx bench/crawl.bench.ts [--names 50000] [--batch 250] [--decode-worker 1] [--ethereum 1]
//
// Seeds a bulk world on a local POLYGON devnet (UNS and FNS, ~4 events a name: 50,000 names ≈
// 200,000 events) with the registries' batch functions, then (1) fetches every log of every source
// with raw eth_getLogs over adaptive ranges, without decoding or storing, and (2) crawls the same
// chain into a fresh SQLite store: decode, journal, projection, scoring, checkpoints. Prints one
// JSON line; `ratio` = crawl events/s ÷ bare fetch events/s. `--ethereum 1` seeds the ETHEREUM
// devnet instead: UNS and the real ENS contracts (one controller commit + register a name, ~10
// events a name).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { crawlSignals } from "../src/cli/crawler-role.js";
import { loadConfig } from "../src/config/load-config.js";
import { loadScoringLists } from "../src/scoring/scoring-lists.js";
import { AdaptiveRange } from "../src/crawler/block-range.js";
import { createCrawler } from "../src/crawler/crawler.js";
import { createCrawlerMetrics } from "../src/crawler/crawler-metrics.js";
import { startLogDecoder } from "../src/crawler/decode-pool.js";
import { sourcesFromManifest } from "../src/devnet/manifest.js";
import { bulkSeed } from "../src/devnet/bulk-seed.js";
import { startDevnet } from "../src/devnet/devnet.js";
import { devnetRpc } from "../src/devnet/rpc.js";
import { pauseMining, resumeMining } from "../src/devnet/tx-sender.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const NAMES = arg("names", 50_000);
const BATCH = arg("batch", 250);
// 0: parse and decode on the main thread, as without the decode worker (comparisons).
const DECODE_WORKER = arg("decode-worker", 1) !== 0;
const MAX_RANGE = 100_000;
const NETWORK = arg("ethereum", 0) !== 0 ? "ETHEREUM" : "POLYGON";

const dir = mkdtempSync(join(tmpdir(), "omniname-bench-"));
const log = (m: string) => process.stderr.write(`${m}\n`);
const devnet = await startDevnet({
  dataDir: dir,
  persist: false,
  seed: false,
  blockTime: 0,
  logs: false,
  networks: [NETWORK],
  basePort: 41_000,
});
try {
  const rpcUrl = devnet.manifest.networks[NETWORK]!.rpcUrl;
  const rpc = devnetRpc(rpcUrl);
  await pauseMining(rpc);
  const seeded = await bulkSeed(await devnet.chains(), { names: NAMES, batchSize: BATCH, runId: "bench" });
  await resumeMining(rpc, 0);
  log(
    `seeded ${seeded.names} names, ${seeded.events} events in ${seeded.blocks} blocks (${seeded.durationMs} ms)`,
  );
  const sources = sourcesFromManifest(devnet.manifest);
  const head = Number(await rpc.call<string>("eth_blockNumber"));

  // (1) Bare fetch: the same filters and range policy, raw JSON parsed, nothing decoded or stored.
  let bareLogs = 0;
  const bareStarted = performance.now();
  await Promise.all(
    sources.map(async (s) => {
      const range = new AdaptiveRange({ initial: 2_000, max: MAX_RANGE });
      for (let from = s.contracts.startBlock; from <= head; ) {
        const to = Math.min(head, from + range.size - 1);
        let n = 0;
        for (const f of s.adapter.filters(s.contracts)) {
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
          n += ((await res.json()) as { result: unknown[] }).result.length;
        }
        bareLogs += n;
        range.succeeded(to - from + 1, n);
        from = to + 1;
      }
    }),
  );
  const bareSeconds = (performance.now() - bareStarted) / 1000;

  // (2) The crawler, as `omniname crawl` runs it (scoring included).
  const store = createSqliteStore(join(dir, "bench.db"));
  await store.migrate();
  const signals = crawlSignals(
    await loadScoringLists(loadConfig({}, { dataDir: dir }), await store.findKycOwners()),
  );
  const crawler = createCrawler({
    sources,
    store,
    logger: pino({ level: "silent" }),
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
  const crawlStarted = performance.now();
  crawler.start();
  await crawler.done();
  const crawlSeconds = (performance.now() - crawlStarted) / 1000;
  const crawled = crawler.status().reduce((n, s) => n + s.eventsApplied, 0);
  const domains = await store.countDomains();
  await store.close();

  const bareRate = bareLogs / bareSeconds;
  const crawlRate = crawled / crawlSeconds;
  process.stdout.write(
    `${JSON.stringify({
      bench: "crawl",
      events: crawled,
      bareLogs,
      domains,
      bareSeconds: +bareSeconds.toFixed(2),
      crawlSeconds: +crawlSeconds.toFixed(2),
      bareEventsPerSecond: Math.round(bareRate),
      crawlEventsPerSecond: Math.round(crawlRate),
      ratio: +(crawlRate / bareRate).toFixed(2),
    })}\n`,
  );
} finally {
  await devnet.stop();
  rmSync(dir, { recursive: true, force: true });
}
