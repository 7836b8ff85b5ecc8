import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { Config } from "../config/config.schema.js";
import type { RuntimeContext } from "../context.js";
import { rollbackTo } from "../crawler/apply-range.js";
import type { SourceStatus } from "../crawler/source-progress.js";
import { ChainReader } from "../crawler/chain-reader.js";
import { type Crawler, createCrawler } from "../crawler/crawler.js";
import { createCrawlerMetrics } from "../crawler/crawler-metrics.js";
import type { CrawlerSource, CrawlerStore, SignalsFn } from "../crawler/crawler-source.js";
import { createRpcClient } from "../crawler/rpc-client.js";
import { holderIdOf, type LeaseOptions } from "../crawler/source-lease.js";
import { mainnetSources } from "../crawler/sources.js";
import { startSnsSource } from "./sns-source.js";
import { type Devnet, startDevnet } from "../devnet/devnet.js";
import { findDevnetManifest, solanaOfManifest, sourcesFromManifest } from "../devnet/manifest.js";
import { AppError } from "../domain/errors.js";
import { NETWORKS, type Network } from "../domain/networks.js";
import { rescoreChanged } from "../jobs/rescore-changed.job.js";
import { buildScoringIndex } from "../jobs/rescore.job.js";
import { createBaseSignalsFn } from "../scoring/base-signals.js";
import { wsUrlOf } from "../crawler/new-heads.js";
import { EMPTY_INDEX, type ScoringFacts, scoringContext } from "../scoring/scoring-index.js";
import type { ScoringLists } from "../scoring/scoring-lists.js";

/** How often index-wide scoring facts (TLD origins, collisions, lookalikes) are recomputed. */
const RESCORE_INTERVAL_MS = 60_000;
/** How long start-up waits for the first backfill before it serves anyway. */
const READY_TIMEOUT_MS = 60_000;

const RPC_KEYS = {
  ETHEREUM: "rpcUrlEthereum",
  POLYGON: "rpcUrlPolygon",
  BSC: "rpcUrlBsc",
  AURORA: "rpcUrlAurora",
} as const satisfies Partial<Record<Network, keyof Config>>;

const WS_KEYS = {
  ETHEREUM: "rpcWsUrlEthereum",
  POLYGON: "rpcWsUrlPolygon",
  BSC: "rpcWsUrlBsc",
  AURORA: "rpcWsUrlAurora",
} as const satisfies Record<keyof typeof RPC_KEYS, keyof Config>;

type RpcNetwork = keyof typeof RPC_KEYS;

/**
 * Where a source hears of new heads (docs/crawler.md, "New heads"): RPC_WS_URL_* when set, else
 * its RPC URL with ws:// (the devnet's anvil, and most self-hosted nodes, serve both on one port);
 * nothing with CRAWLER_NEW_HEADS=false.
 */
export function newHeadsUrlOf(config: Config): (source: CrawlerSource) => string | null {
  return (source) => {
    if (!config.crawlerNewHeads) return null;
    const key = WS_KEYS[source.network as RpcNetwork];
    return (key ? config[key] : undefined) ?? wsUrlOf(source.rpcUrl);
  };
}

/** The networks with an RPC URL configured (RPC_URL_*), or [] for none. */
export function configuredNetworks(config: Config): RpcNetwork[] {
  return (Object.keys(RPC_KEYS) as RpcNetwork[]).filter((n) => Boolean(config[RPC_KEYS[n]]));
}

/** The finality window of a network from the configuration (FINALITY_*). */
export function finalityOf(config: Config, network: Network): number {
  switch (network) {
    case "ETHEREUM":
      return config.finalityEthereum;
    case "POLYGON":
      return config.finalityPolygon;
    case "BSC":
      return config.finalityBsc;
    case "AURORA":
      return config.finalityAurora;
    default:
      return NETWORKS[network].finality;
  }
}

/**
 * The sources this configuration crawls: the real chains of RPC_URL_* (mainnet contracts) when any
 * is set, else the local devnet of DATA_DIR/devnet.json. `only` keeps the listed source ids.
 */
export function resolveSources(config: Config, only?: string[]): CrawlerSource[] {
  let sources: CrawlerSource[];
  const networks = configuredNetworks(config);
  // RPC_URL_SOLANA alone is a real-chain configuration too (its source is startSnsSource's).
  if (networks.length > 0 || config.rpcUrlSolana)
    sources = networks.flatMap((n) => mainnetSources(n, config[RPC_KEYS[n]] as string));
  else {
    const manifest = findDevnetManifest(config.dataDir);
    if (!manifest) {
      throw new AppError(
        "CONFIG_INVALID",
        `no chain to crawl: set RPC_URL_ETHEREUM/POLYGON/BSC/AURORA, or start the devnet (omniname devnet) so that ${config.dataDir}/devnet.json exists`,
      );
    }
    sources = sourcesFromManifest(manifest);
  }
  if (only && only.length > 0) {
    const unknown = only.filter((id) => !sources.some((s) => s.id === id));
    if (unknown.length > 0) throw new AppError("INVALID_PARAMETER", `unknown source ${unknown.join(", ")}`);
    sources = sources.filter((s) => only.includes(s.id));
  }
  return sources;
}

/** The crawler sync options of a configuration. */
export function syncOptionsOf(config: Config) {
  return {
    pollIntervalMs: config.crawlerPollIntervalMs,
    maxRange: config.crawlerMaxRange,
    initialRange: Math.min(config.crawlerInitialRange, config.crawlerMaxRange),
    requestTimeoutMs: config.crawlerRpcTimeoutMs,
    newHeadsUrl: newHeadsUrlOf(config),
    changeRetentionMs: config.changesRetentionDays * 86_400_000,
  };
}

/**
 * The scoring engine's base signals with the operator's lists, for every domain the crawler
 * writes. Index-wide facts come from `index`: the last rescoring pass's (jobs/rescore.job.ts),
 * or none. Only the small ones are held: TLD origins (one per TLD) and lookalikes (one per
 * imitating name). How many domains hold a name is not known at write time (it would be a
 * whole-map map, or a store read inside the synchronous SignalsFn): the `collision` tag (no
 * points) of a domain the crawler writes comes with the next pass, within RESCORE_INTERVAL_MS.
 */
export function crawlSignals(lists: ScoringLists, index: () => ScoringFacts = () => EMPTY_INDEX): SignalsFn {
  // One context per set of facts (the rescoring pass replaces the object), not one per domain.
  let facts: ScoringFacts | undefined;
  let ctx: ReturnType<typeof scoringContext> | undefined;
  return createBaseSignalsFn(() => {
    const now = index();
    if (ctx === undefined || now !== facts) {
      facts = now;
      ctx = scoringContext(lists, now);
    }
    return ctx;
  });
}

/** Moves a source back to `block` (a block on the canonical chain), replaying from its journal; clears a halt. */
export async function rewindSource(
  store: CrawlerStore,
  source: CrawlerSource,
  block: number,
  signals: SignalsFn,
): Promise<void> {
  const reader = new ChainReader(createRpcClient({ url: source.rpcUrl }), source.chainId);
  const header = await reader.header(block);
  await rollbackTo(
    store,
    source,
    { blockNumber: block, blockHash: header.hash },
    "syncing",
    Date.now(),
    signals,
  );
}

export interface CrawlerRoleOptions {
  /** Crawl only these source ids (`crawl --sources`). */
  only?: string[];
  /** Each source returns once it reaches its head (`crawl --exit-when-synced`). */
  exitWhenSynced?: boolean;
  /**
   * With no chain configured, run the local devnet in this process (embedded `start`), and keep
   * the index at or below what its state files hold. Otherwise DATA_DIR/devnet.json names it.
   */
  embedDevnet?: boolean;
  /** Recompute index-wide scoring facts now and every minute (`start`). Default false. */
  rescore?: boolean;
}

export interface CrawlerRole {
  crawler: Crawler;
  devnet: Devnet | null;
  /** The Prometheus registry of the crawler's metrics (GET /metrics). */
  registry: Registry;
  /** Resolves when every source is live (caught up with its head), or after READY_TIMEOUT_MS. */
  ready: Promise<void>;
  /**
   * Resolves when the Solana Name Service source (RPC_URL_SOLANA) has ended: after its one pass
   * with `exitWhenSynced`, else once stopped; at once without one.
   */
  snsDone: Promise<void>;
  /** Every source's status for GET /status: the EVM crawler's, then the SNS source's. */
  status(): Array<ReturnType<Crawler["status"]>[number] | SourceStatus>;
  stop(): Promise<void>;
}

/**
 * The crawler role, as `start` and `crawl` both run it: the sources of the configuration (and the
 * embedded devnet when asked), the scoring of the context's lists, one crawler, started.
 *
 * @example
 * const role = await startCrawlerRole(ctx, { exitWhenSynced: true });
 * const states = await role.crawler.done(); await role.stop();
 */
export async function startCrawlerRole(
  ctx: RuntimeContext,
  options: CrawlerRoleOptions = {},
): Promise<CrawlerRole> {
  const { config } = ctx;
  const log = ctx.logger.child({ component: "crawler" });
  let devnet: Devnet | null = null;
  if (options.embedDevnet && configuredNetworks(config).length === 0 && !config.rpcUrlSolana) {
    // Embedded default: no chain configured, so crawl a local devnet seeded with the demo world.
    devnet = await startDevnet({
      dataDir: config.dataDir,
      blockTime: 1,
      log: (m) => log.info(m),
      // A freshly deployed devnet has new block hashes: what was indexed from an earlier one is
      // dropped, before the new manifest is written, so that a crash in between clears it again.
      onFresh: () => ctx.store.clearChainIndex(),
    });
  }
  const sources = resolveSources(config, options.only);
  const lists = ctx.scoringLists;
  // The facts only (TLD origins and lookalikes, read from small indexes): the scoring pass itself
  // runs beside the crawler (startRescoring), so a big map does not delay the start.
  let index: ScoringFacts = options.rescore ? await buildScoringIndex(ctx.store, lists) : EMPTY_INDEX;
  const registry = new Registry();
  const chains = devnet;
  // One writer per source across crawler processes on one store (docs/operations.md), the SNS
  // source's included.
  const lease: LeaseOptions = {
    holder: holderIdOf(config.instanceId),
    ttlMs: config.crawlerLeaseTtlMs,
    renewMs: config.crawlerLeaseRenewMs,
    // PostgreSQL: the advisory lock on top of the row (takeover in ~one renewal after a kill -9).
    locks: ctx.store.sourceLocks,
  };
  const crawler = createCrawler({
    sources,
    store: ctx.store,
    logger: log,
    metrics: createCrawlerMetrics(registry),
    sync: { ...syncOptionsOf(config), exitWhenSynced: options.exitWhenSynced },
    finalityOf: (s) => finalityOf(config, s.network),
    // The devnet runs in this process group: a crash takes back its unsaved blocks, so the index
    // stays at or below what its state files hold (devnet/state-saver.ts).
    maxHeadOf: chains ? (s) => chains.savedHead(s.network) : undefined,
    // A new head is saved at once rather than at the next periodic save (about a second later).
    awaitMaxHeadOf: chains ? (s, block) => chains.saveThrough(s.network, block) : undefined,
    signals: crawlSignals(lists, () => index),
    lease,
  });
  crawler.start();
  // Without a real chain configured, the SNS source reads the devnet's Solana (devnet.json).
  const localManifest =
    config.rpcUrlSolana || configuredNetworks(config).length > 0
      ? null
      : (devnet?.manifest ?? findDevnetManifest(config.dataDir));
  const devnetSolana = localManifest ? solanaOfManifest(localManifest) : null;
  const sns = startSnsSource(
    ctx,
    log,
    crawlSignals(lists, () => index),
    options.exitWhenSynced === true,
    devnetSolana,
    lease,
  );

  const rescorer = options.rescore ? startRescoring(ctx, log, (i) => (index = i)) : null;
  void rescorer?.run();
  const ready = (async () => {
    const until = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < until) {
      const states = crawler.status().map((s) => s.state);
      // The SNS source is ready after its first pass (or its first failure: it retries).
      if (sns) states.push(sns.status().state);
      // A standby source is not ready: its writer may be this process's own killed predecessor,
      // whose lease expires within seconds; a true standby waits out READY_TIMEOUT_MS.
      if (states.every((s) => s === "live" || s === "halted" || s === "stopped")) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await rescorer?.run();
  })();
  return {
    crawler,
    devnet,
    registry,
    ready,
    snsDone: sns?.running ?? Promise.resolve(),
    status: () => [...crawler.status(), ...(sns ? [sns.status()] : [])],
    async stop() {
      await rescorer?.stop();
      sns?.stop();
      await sns?.running;
      await crawler.stop();
      await devnet?.stop();
    },
  };
}

/**
 * Rescoring every RESCORE_INTERVAL_MS and on `run()`, one pass at a time, each scoring only what
 * changed since the last (jobs/rescore-changed.job.ts). `run()` during a pass waits for it, then
 * runs one more, so that what was written before the call is scored when it resolves. The new
 * facts go to `onIndex`.
 */
function startRescoring(ctx: RuntimeContext, log: Logger, onIndex: (index: ScoringFacts) => void) {
  let current: Promise<void> | null = null;
  const stopping = new AbortController();
  const pass = async () => {
    try {
      const started = Date.now();
      const r = await rescoreChanged(ctx.store, ctx.scoringLists, { onIndex, signal: stopping.signal });
      if (stopping.signal.aborted) return;
      if (r.updated > 0 || r.mode === "full")
        log.info(
          { mode: r.mode, scanned: r.scanned, updated: r.updated, ms: Date.now() - started },
          "rescored",
        );
    } catch (e) {
      if (!stopping.signal.aborted) log.error({ err: e }, "rescoring failed");
    }
  };
  const run = async (): Promise<void> => {
    while (current) await current;
    if (stopping.signal.aborted) return;
    current = pass().finally(() => {
      current = null;
    });
    await current;
  };
  const timer = setInterval(() => {
    if (!current) void run();
  }, RESCORE_INTERVAL_MS);
  timer.unref();
  return {
    run,
    /** Ends the timer and interrupts a pass between pages; resolves when it has returned. */
    async stop() {
      clearInterval(timer);
      stopping.abort();
      await current;
    },
  };
}
