// From a block mined to its change feed event, through a real SSE client.
//
//   npx tsx bench/feed.bench.ts [--blocks 30] [--postgres 1]
//
// An unseeded POLYGON devnet whose chain mines only when told, the crawler following it (poll
// interval 50 ms, as `CRAWLER_POLL_INTERVAL_MS` may be set), the API in the same process on a fresh
// store (SQLite, or with `--postgres 1` a fresh PostgreSQL database on 127.0.0.1:5432, dropped
// afterwards), and an `eventsource` client on GET /svc/api/v1/changes. Each round mines one block
// with one FNS mint and times mined → `domain.created` received. Prints one JSON line: median, p95
// and max in ms, with the load average. Most of the figure is the crawler's poll interval: the
// feed's own part is the time from the crawler's commit (the event's `time`) to the client, also
// printed (`writeToClientMs`: from the start of the crawler's write transaction, the event's
// `time`, to the client).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { EventSource } from "eventsource";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import type { Hex } from "viem";
import { createApiKey } from "../src/accounts/api-keys.js";
import { createConsoleServices } from "../src/accounts/console-services.js";
import { buildApp } from "../src/api/app.js";
import { loadConfig } from "../src/config/load-config.js";
import { createCrawler } from "../src/crawler/crawler.js";
import { createCrawlerMetrics } from "../src/crawler/crawler-metrics.js";
import { callData } from "../src/devnet/deploy.js";
import { DEVNET_DEPLOYER, startDevnet } from "../src/devnet/devnet.js";
import { sourcesFromManifest } from "../src/devnet/manifest.js";
import { devnetRpc } from "../src/devnet/rpc.js";
import { createTxSender, pauseMining } from "../src/devnet/tx-sender.js";
import { createScoringRanker } from "../src/resolution/rank.js";
import { createPostgresStore } from "../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const BLOCKS = arg("blocks", 30);
const POSTGRES = arg("postgres", 0) !== 0;
const PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres";
const pgDatabase = `omniname_feed_bench_${process.pid}`;

const dir = mkdtempSync(join(tmpdir(), "omniname-feed-bench-"));
const devnet = await startDevnet({
  dataDir: dir,
  persist: false,
  seed: false,
  blockTime: 0,
  logs: false,
  networks: ["POLYGON"],
  basePort: 42_000 + Math.floor(Math.random() * 10_000),
});
const rpcUrl = devnet.manifest.networks.POLYGON!.rpcUrl;
await pauseMining(devnetRpc(rpcUrl));
const sources = sourcesFromManifest(devnet.manifest);
const registry = sources.find((s) => s.id === "fns-polygon")!.contracts.addresses.registry as Hex;

if (POSTGRES) {
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`create database ${pgDatabase}`);
  await admin.end();
}
const store = POSTGRES
  ? createPostgresStore(`postgres://postgres@127.0.0.1:5432/${pgDatabase}`)
  : createSqliteStore(join(dir, "bench.db"));
await store.migrate();
const crawler = createCrawler({
  sources,
  store,
  logger: pino({ level: "silent" }),
  metrics: createCrawlerMetrics(new Registry()),
  sync: {
    pollIntervalMs: 50,
    maxRange: 2_000,
    initialRange: 100,
    requestTimeoutMs: 10_000,
    progressIntervalMs: 60_000,
  },
  finalityOf: () => 10,
  signals: () => ({ baseScore: 50, spam: false, csamOk: true, kyc: false, tags: [] }),
});
crawler.start();
const pepper = randomBytes(16).toString("hex");
const ctx = {
  config: loadConfig({}, { dataDir: dir }),
  logger: pino({ level: "silent" }),
  store,
  ranker: createScoringRanker(),
  pepper,
  clock: Date.now,
};
const project = await store.createProject({ name: "bench", plan: "internal" });
const { key } = await createApiKey(store, pepper, project.id, "bench");
const app = await buildApp(ctx, {
  services: createConsoleServices(ctx),
  closeServices: true,
  console: false,
});
const base = await app.listen({ host: "127.0.0.1", port: 0 });

const received: Array<{ at: number; wall: number; time: number }> = [];
const es = new EventSource(`${base}/svc/api/v1/changes?types=domain.created`, {
  fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers ?? {}), "api-key": key } }),
});
es.addEventListener("domain.created", (m) =>
  received.push({ at: performance.now(), wall: Date.now(), time: Date.parse(JSON.parse(m.data).time) }),
);
await new Promise<void>((resolve, reject) => {
  es.onopen = () => resolve();
  es.onerror = (e) => reject(new Error(`feed: ${e.message}`));
});

const sender = await createTxSender(devnetRpc(rpcUrl), DEVNET_DEPLOYER);
const lags: number[] = [];
const feedLags: number[] = [];
for (let i = 0; i < BLOCKS; i++) {
  await sender.send([
    { to: registry, data: callData("FNSRegistry", "mint", [DEVNET_DEPLOYER, `b${i}`, "feedbench"]) },
  ]);
  const mined = performance.now();
  await sender.mine();
  while (received.length <= i) await new Promise((r) => setTimeout(r, 1));
  lags.push(received[i].at - mined);
  feedLags.push(received[i].wall - received[i].time);
  // Blocks at random phases of the crawler's poll.
  await new Promise((r) => setTimeout(r, Math.random() * 60));
}
es.close();
const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]);
};
console.log(
  JSON.stringify({
    bench: "feed",
    store: POSTGRES ? "postgres" : "sqlite",
    blocks: BLOCKS,
    minedToEventMs: { p50: q(lags, 0.5), p95: q(lags, 0.95), max: q(lags, 1) },
    writeToClientMs: { p50: q(feedLags, 0.5), p95: q(feedLags, 0.95), max: q(feedLags, 1) },
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
  }),
);
await crawler.stop();
await app.close();
await store.close();
await devnet.stop();
if (POSTGRES) {
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`drop database if exists ${pgDatabase}`);
  await admin.end();
}
rmSync(dir, { recursive: true, force: true });
