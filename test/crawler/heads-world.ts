import pino from "pino";
import { Registry } from "prom-client";
import { type Crawler, type CrawlerOptions, createCrawler } from "../../src/crawler/crawler.js";
import { createCrawlerMetrics } from "../../src/crawler/crawler-metrics.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { wsUrlOf } from "../../src/crawler/new-heads.js";
import type { Devnet } from "../../src/devnet/devnet.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import type { Store } from "../../src/store/store.js";
import { FAST_SYNC, NEUTRAL_SIGNALS, startPausedDevnet, tempStore, waitFor } from "./crawler-harness.js";

/**
 * A paused POLYGON devnet, a temporary store and the UNS source on it: the world of the tests of
 * a source that follows new heads (new-heads.test.ts, head-limit.test.ts).
 */
export interface HeadsWorld {
  store: Store;
  devnet: Devnet;
  /** The POLYGON node's RPC URL. */
  polygon: string;
  sources: CrawlerSource[];
  /** Starts the crawler, woken by new heads only (it polls every 10 minutes), and waits until it is live. */
  follow(extra?: Pick<CrawlerOptions, "maxHeadOf" | "awaitMaxHeadOf">): Promise<Crawler>;
  close(): Promise<void>;
}

export async function openHeadsWorld(): Promise<HeadsWorld> {
  const t = await tempStore();
  const devnet = await startPausedDevnet(t.dir, ["POLYGON"]);
  let crawler: Crawler | null = null;
  const sources = sourcesFromManifest(devnet.manifest).filter((s) => s.id === "uns-polygon");
  return {
    store: t.store,
    devnet,
    polygon: devnet.manifest.networks.POLYGON?.rpcUrl ?? "",
    sources,
    async follow(extra = {}) {
      crawler = createCrawler({
        sources,
        store: t.store,
        logger: pino({ level: "silent" }),
        metrics: createCrawlerMetrics(new Registry()),
        // Polling every 10 minutes: only a new head can wake the source within a test.
        sync: { ...FAST_SYNC, pollIntervalMs: 600_000, newHeadsUrl: (s) => wsUrlOf(s.rpcUrl) },
        finalityOf: () => 10,
        signals: NEUTRAL_SIGNALS,
        ...extra,
      });
      crawler.start();
      const started = crawler;
      await waitFor(
        async () => (started.status().every((s) => s.state === "live") ? true : null),
        30_000,
        "live",
      );
      return started;
    },
    async close() {
      await crawler?.stop();
      await devnet.stop();
      await t.cleanup();
    },
  };
}
