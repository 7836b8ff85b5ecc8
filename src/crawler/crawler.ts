import type { Logger } from "pino";
import type { CrawlerSource, CrawlerStore, SignalsFn, SyncOptions } from "./crawler-source.js";
import type { CrawlerMetrics } from "./crawler-metrics.js";
import type { SourceState, SourceStatus } from "./source-progress.js";
import { LeasedSource, type LeaseOptions, type LeaseStatus } from "./source-lease.js";
import { SourceSync } from "./source-sync.js";

export interface CrawlerOptions {
  sources: CrawlerSource[];
  store: CrawlerStore;
  logger: Logger;
  metrics?: CrawlerMetrics;
  /** Per-source sync options; `finality` comes from `finalityOf(source)`. */
  sync: Omit<SyncOptions, "finality" | "signals" | "maxHead" | "awaitMaxHead">;
  finalityOf(source: CrawlerSource): number;
  /** The highest block a source may index (SyncOptions.maxHead); absent or null: its chain's head. */
  maxHeadOf?(source: CrawlerSource): number | null;
  /** Moves a source's limit up to `block` (SyncOptions.awaitMaxHead), with `maxHeadOf`. */
  awaitMaxHeadOf?(source: CrawlerSource, block: number): Promise<number | null>;
  /** The scoring fields written with every domain (src/scoring's base signals). */
  signals: SignalsFn;
  /** One writer per source across processes (source-lease.ts); absent: this process writes every source. */
  lease?: LeaseOptions;
}

export interface Crawler {
  /** Starts every source's loop; resolves at once. */
  start(): void;
  /** Stops every loop and waits for them (a range in flight is finished or rolled back by its transaction). */
  stop(): Promise<void>;
  /** Resolves with each source's final state when every loop has ended (exitWhenSynced, halt, stop). */
  done(): Promise<Record<string, SourceState>>;
  status(): Array<SourceStatus & { lease?: LeaseStatus }>;
}

/**
 * One sync loop per source, side by side in this process. A source that halts (deep reorg) or
 * fails stops alone: the others go on, and the store keeps serving what was applied.
 *
 * @example
 * const crawler = createCrawler({ sources, store, logger, sync, finalityOf });
 * crawler.start(); … await crawler.stop();
 */
export function createCrawler(options: CrawlerOptions): Crawler {
  const syncOf = (s: CrawlerSource, store: CrawlerStore) =>
    new SourceSync(
      s,
      store,
      options.logger,
      {
        ...options.sync,
        finality: options.finalityOf(s),
        maxHead: options.maxHeadOf ? () => options.maxHeadOf?.(s) ?? null : undefined,
        awaitMaxHead: options.awaitMaxHeadOf
          ? (block) => options.awaitMaxHeadOf?.(s, block) ?? Promise.resolve(null)
          : undefined,
        signals: options.signals,
      },
      options.metrics,
    );
  const lease = options.lease;
  const syncs = options.sources.map((s) =>
    lease
      ? Object.assign(
          new LeasedSource(s.id, options.store, (store) => syncOf(s, store), lease, options.logger),
          {
            source: s,
          },
        )
      : syncOf(s, options.store),
  );
  let running: Promise<Record<string, SourceState>> | null = null;
  return {
    start() {
      if (running) return;
      running = Promise.all(
        syncs.map((s) =>
          s.run().catch((e) => {
            // run() handles its own errors; reaching here is a bug, reported and contained.
            options.logger.error({ err: e, source: s.source.id }, "sync loop crashed");
            return "stopped" as SourceState;
          }),
        ),
      ).then((states) => Object.fromEntries(syncs.map((s, i) => [s.source.id, states[i]])));
    },
    async stop() {
      // Each loop has its own stop signal: one shared signal would carry a listener per source.
      for (const s of syncs) s.stop();
      if (running) await running;
    },
    done() {
      return running ?? Promise.resolve({});
    },
    status() {
      return syncs.map((s) => s.status());
    },
  };
}
