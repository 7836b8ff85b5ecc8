import type { Logger } from "pino";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { DomainRecord, DomainWrite } from "../domain/types.js";
import type { ProviderAdapter, SourceContracts } from "../providers/provider.js";
import type { Store } from "../store/store.js";
import type { ChainReader } from "./chain-reader.js";
import type { CrawlerMetrics } from "./crawler-metrics.js";

/** One crawled (provider, network) pair: where to read, what to read, how to decode it. */
export interface CrawlerSource {
  /** Stable id of the checkpoint and journal rows, e.g. `<protocol>-polygon` (sources.ts `sourceIdOf`). */
  id: string;
  provider: Provider;
  network: Network;
  chainId: number;
  adapter: ProviderAdapter;
  contracts: SourceContracts;
  rpcUrl: string;
  /** Start block unknown (an undisclosed deployment, docs/chain-facts.md): find the deployment by bisecting eth_getCode. */
  discoverStartBlock?: boolean;
}

/** The scoring fields written with a domain (src/scoring's computeBaseSignals plugs in here). */
export type SignalsFn = (
  domain: DomainWrite,
  records: readonly DomainRecord[],
) => Pick<DomainWrite, "baseScore" | "spam" | "csamOk" | "kyc" | "tags">;

/**
 * The store parts the crawler uses: its log (checkpoints, journal, recent blocks), the map it
 * writes, and transactions.
 */
export type CrawlerStore = Pick<Store, "crawlerLog" | "domainMap" | "changeLog" | "transaction">;

/** What the parts of one source's sync loop share: the source, its store, chain and rules. */
export interface SourceContext {
  source: CrawlerSource;
  store: CrawlerStore;
  reader: ChainReader;
  finality: number;
  signals: SignalsFn;
  clock: () => number;
  log: Logger;
  metrics?: CrawlerMetrics;
  /** Changes in blocks older than this (ms) are not logged to the change log: they would be pruned. */
  changeRetentionMs?: number;
}

/** The options of one source's sync loop (source-sync.ts). */
export interface SyncOptions {
  /** Blocks after which a block is final; a deeper reorg halts the source. */
  finality: number;
  pollIntervalMs: number;
  maxRange: number;
  initialRange?: number;
  requestTimeoutMs: number;
  /** Return once the checkpoint reaches the head (CLI --exit-when-synced, tests, benchmarks). */
  exitWhenSynced?: boolean;
  progressIntervalMs?: number;
  /** First delay of the retry backoffs (RPC calls and failed steps). Default 250 ms. */
  backoffMs?: number;
  /** The scoring fields written with every domain (src/scoring's base signals). */
  signals: SignalsFn;
  clock?: () => number;
  /**
   * The change log's retention (CHANGES_RETENTION_DAYS): a change in a block older than this is not
   * logged, so a backfill of years writes the log of the last days only. Default: every change.
   */
  changeRetentionMs?: number;
  /** Parse and decode eth_getLogs replies in the decode worker (decode-pool.ts). Default true. */
  decodeInWorker?: boolean;
  /**
   * The highest block this source may index, or null for no limit: the embedded devnet's saved
   * head, so that the index never holds blocks a crash of the devnet would take back.
   */
  maxHead?: () => number | null;
  /**
   * With `maxHead`: called when the chain's head is past it and nothing below it is left to index;
   * resolves with the limit once it reached `block` (the embedded devnet saves its state through
   * that block at once), so that a new block is indexed as soon as it is safe, not at the next
   * periodic save. Absent: the source waits for the next head or poll.
   */
  awaitMaxHead?: (block: number) => Promise<number | null>;
  /**
   * The WebSocket URL whose newHeads wake this source when it is caught up (new-heads.ts), or
   * null to only poll. Default: none.
   */
  newHeadsUrl?: (source: CrawlerSource) => string | null;
}
