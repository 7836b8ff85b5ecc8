// Freshness: from a block mined to the API serving what it holds, with the crawler woken by
// eth_subscribe("newHeads") against the polling baseline (CRAWLER_POLL_INTERVAL_MS, 1000 ms by
// default), measured in the same run on one local POLYGON devnet.
//
//   npx tsx bench/freshness.bench.ts [--rounds 30]
//
// Each round mints one UNS name through the real MintingManager, mines its block, and asks the
// API (in process, app.inject) for the name every 5 ms until it answers 200. Prints one JSON line
// per mode (median, p90 and max in ms) and the ratio of the medians.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { createApiKey } from "../src/accounts/api-keys.js";
import { createConsoleServices } from "../src/accounts/console-services.js";
import { buildApp } from "../src/api/app.js";
import { loadConfig } from "../src/config/load-config.js";
import { createCrawler } from "../src/crawler/crawler.js";
import { createCrawlerMetrics } from "../src/crawler/crawler-metrics.js";
import { wsUrlOf } from "../src/crawler/new-heads.js";
import { DEVNET_DEPLOYER, startDevnet } from "../src/devnet/devnet.js";
import { sourcesFromManifest } from "../src/devnet/manifest.js";
import { unsCall } from "../src/devnet/real-uns.js";
import { devnetRpc } from "../src/devnet/rpc.js";
import { createTxSender, pauseMining } from "../src/devnet/tx-sender.js";
import { createScoringRanker } from "../src/resolution/rank.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";

const args = process.argv.slice(2);
const ROUNDS = Number(args[args.indexOf("--rounds") + 1] || 30) || 30;
const POLL_MS = 1_000;
const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function run(mode: "newHeads" | "polling") {
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
  const store = createSqliteStore(join(dir, "omniname.db"));
  await store.migrate();
  const rpcUrl = devnet.manifest.networks.POLYGON?.rpcUrl ?? "";
  await pauseMining(devnetRpc(rpcUrl));
  const sources = sourcesFromManifest(devnet.manifest).filter((s) => s.id === "uns-polygon");
  const crawler = createCrawler({
    sources,
    store,
    logger: pino({ level: "silent" }),
    metrics: createCrawlerMetrics(new Registry()),
    sync: {
      pollIntervalMs: POLL_MS,
      maxRange: 100_000,
      requestTimeoutMs: 5_000,
      newHeadsUrl: mode === "newHeads" ? (s) => wsUrlOf(s.rpcUrl) : undefined,
    },
    finalityOf: () => 10,
    signals: () => ({ baseScore: 50, spam: false, csamOk: true, kyc: false, tags: [] }),
  });
  crawler.start();
  const ctx = {
    config: loadConfig({}, { dataDir: dir }),
    logger: pino({ level: "silent" }),
    store,
    ranker: createScoringRanker(),
    pepper: randomBytes(16).toString("hex"),
    clock: Date.now,
  };
  const project = await store.createProject({ name: "fresh", plan: "internal" });
  const key = (await createApiKey(store, ctx.pepper, project.id, "k")).key;
  const app = await buildApp(ctx, { services: createConsoleServices(ctx), closeServices: true });
  const sender = await createTxSender(devnetRpc(rpcUrl), DEVNET_DEPLOYER);
  const manager = sources[0].contracts.addresses.mintingManager as `0x${string}`;
  const latencies: number[] = [];
  try {
    while (!crawler.status().every((s) => s.state === "live")) await new Promise((r) => setTimeout(r, 50));
    // Warm-up round (the subscription, the first reads), not counted.
    for (let round = -1; round < ROUNDS; round++) {
      const name = `fresh${round + 1}x${Date.now()}.x`;
      await sender.send([
        {
          to: manager,
          data: unsCall("MintingManager", "issueWithRecords", [OWNER, name.split("."), [], [], false]),
        },
      ]);
      // Rounds start at random points of the polling interval, as blocks do.
      await new Promise((r) => setTimeout(r, Math.random() * POLL_MS));
      await sender.mine();
      const mined = performance.now();
      for (;;) {
        const res = await app.inject({
          url: `/svc/api/v1/resolve?domain=${name}`,
          headers: { "api-key": key },
        });
        if (res.statusCode === 200) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      if (round >= 0) latencies.push(performance.now() - mined);
    }
  } finally {
    await crawler.stop();
    await app.close();
    await store.close();
    await devnet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const r = {
    mode,
    rounds: latencies.length,
    medianMs: Math.round(quantile(latencies, 0.5)),
    p90Ms: Math.round(quantile(latencies, 0.9)),
    maxMs: Math.round(Math.max(...latencies)),
  };
  console.log(JSON.stringify(r));
  return r;
}

const polling = await run("polling");
const heads = await run("newHeads");
console.log(
  JSON.stringify({
    bench: "freshness",
    what: "block mined → API serves it",
    pollIntervalMs: POLL_MS,
    newHeadsMedianMs: heads.medianMs,
    pollingMedianMs: polling.medianMs,
    ratio: Number((polling.medianMs / Math.max(1, heads.medianMs)).toFixed(2)),
    target: "median < 250 ms",
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
