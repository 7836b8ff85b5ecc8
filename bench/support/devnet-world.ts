import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { buildApp } from "../../src/api/app.js";
import { createApiWorkers } from "../../src/workers/api-workers.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createCrawler } from "../../src/crawler/crawler.js";
import { createCrawlerMetrics } from "../../src/crawler/crawler-metrics.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { wsUrlOf } from "../../src/crawler/new-heads.js";
import { DEVNET_DEPLOYER, startDevnet } from "../../src/devnet/devnet.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { createTxSender, pauseMining } from "../../src/devnet/tx-sender.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres";

export interface DevnetWorldOptions {
  /** Crawler sources kept (by id); all of the devnet's POLYGON sources when absent. */
  sourceIds?: string[];
  /** The crawler's poll interval (ms). */
  pollMs: number;
  /** Wake the crawler with eth_subscribe("newHeads") too. */
  newHeads: boolean;
  /** A fresh PostgreSQL database on 127.0.0.1:5432 (dropped by `stop`) instead of SQLite. */
  postgres?: boolean;
  /** Listen on 127.0.0.1 (an SSE client needs a socket; app.inject does not). */
  listen?: boolean;
  /** The webhook deliverer's poll interval (ms); the app's default when absent. */
  webhookPollMs?: number;
}

/**
 * The freshness benches' world: an unseeded POLYGON devnet that mines only when told, the crawler
 * following it, and the whole app (API, change feed, webhook deliverer) in this process on a
 * fresh store, with one project and its API key. `stop` takes it all down and deletes it.
 */
export async function startDevnetWorld(o: DevnetWorldOptions) {
  const dir = mkdtempSync(join(tmpdir(), "omniname-fresh-"));
  const devnet = await startDevnet({
    dataDir: dir,
    persist: false,
    seed: false,
    blockTime: 0,
    logs: false,
    networks: ["POLYGON"],
    basePort: 20_000 + Math.floor(Math.random() * 20_000),
  });
  const rpcUrl = devnet.manifest.networks.POLYGON?.rpcUrl ?? "";
  await pauseMining(devnetRpc(rpcUrl));
  const sources: CrawlerSource[] = sourcesFromManifest(devnet.manifest).filter((s) =>
    o.sourceIds ? o.sourceIds.includes(s.id) : s.network === "POLYGON",
  );
  const pgDatabase = `omniname_fresh_bench_${process.pid}_${randomBytes(3).toString("hex")}`;
  const admin = async (query: string) => {
    const c = new pg.Client({ connectionString: PG_ADMIN });
    await c.connect();
    await c.query(query);
    await c.end();
  };
  if (o.postgres) await admin(`create database ${pgDatabase}`);
  const store = o.postgres
    ? createPostgresStore(`postgres://postgres@127.0.0.1:5432/${pgDatabase}`)
    : createSqliteStore(join(dir, "omniname.db"));
  await store.migrate();
  const crawler = createCrawler({
    sources,
    store,
    logger: pino({ level: "silent" }),
    metrics: createCrawlerMetrics(new Registry()),
    sync: {
      pollIntervalMs: o.pollMs,
      maxRange: 100_000,
      initialRange: 100,
      requestTimeoutMs: 5_000,
      progressIntervalMs: 60_000,
      newHeadsUrl: o.newHeads ? (s) => wsUrlOf(s.rpcUrl) : undefined,
    },
    finalityOf: () => 10,
    signals: () => ({ baseScore: 50, spam: false, csamOk: true, kyc: false, tags: [] }),
  });
  crawler.start();
  const ctx: AppContext = {
    config: loadConfig({}, { dataDir: dir }),
    logger: pino({ level: "silent" }),
    store,
    ranker: createScoringRanker(),
    pepper: randomBytes(16).toString("hex"),
    clock: Date.now,
  };
  const project = await store.projects.createProject({ name: "fresh", plan: "internal" });
  const { key } = await createApiKey(store, ctx.pepper, project.id, "k");
  const services = createConsoleServices(ctx);
  const registry = new Registry();
  const workers = createApiWorkers(ctx, services, { pollMs: o.webhookPollMs, registry });
  const app = await buildApp(ctx, {
    services,
    closeServices: true,
    console: false,
    workers,
    metricsRegistry: registry,
  });
  const base = o.listen ? await app.listen({ host: "127.0.0.1", port: 0 }) : null;
  if (!o.listen) await app.ready();
  workers.start();
  const sender = await createTxSender(devnetRpc(rpcUrl), DEVNET_DEPLOYER);
  while (!crawler.status().every((s) => s.state === "live")) await new Promise((r) => setTimeout(r, 50));
  return {
    ctx,
    store,
    app,
    base,
    key,
    projectId: project.id,
    sources,
    sender,
    contract: (id: string, name: "registry" | "mintingManager") =>
      sources.find((s) => s.id === id)!.contracts.addresses[name] as `0x${string}`,
    async stop() {
      await crawler.stop();
      await workers.stop();
      await app.close();
      await store.close();
      await devnet.stop();
      if (o.postgres) await admin(`drop database if exists ${pgDatabase}`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `q` quantile of `xs` (nearest rank), rounded to a millisecond. */
export function quantileMs(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN);
}
