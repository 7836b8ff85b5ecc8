import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import { redactUrl } from "../config/redact.js";
import type { Provider } from "../domain/providers.js";
import { adapterFor } from "../providers/adapters.js";
import type { SourceContracts } from "../providers/provider.js";
import type { RecentBlock } from "../store/crawler-log.port.js";
import type { Store } from "../store/store.js";
import {
  applyRange,
  type CrawlerSource,
  type DecodeIssue,
  journalEntriesOf,
  rollbackTo,
  type SignalsFn,
} from "./apply-range.js";
import { AdaptiveRange, MAX_LOG_REQUESTS, splitRange } from "./block-range.js";
import { startLogDecoder } from "./decode-pool.js";
import { type BlockHeader, ChainReader } from "./chain-reader.js";
import type { FetchedLog } from "./log-batch.js";
import type { CrawlerMetrics } from "./crawler-metrics.js";
import type { DataIssue } from "./projection.js";
import { findCommonAncestor, formatEta, haltAdvice, sleep } from "./sync-helpers.js";
import { createRpcClient, faultOf, RPC_FAULTS } from "./rpc-client.js";

export const SOURCE_STATES = ["starting", "backfill", "live", "retrying", "halted", "stopped"] as const;
export type SourceState = (typeof SOURCE_STATES)[number];

export interface SourceStatus {
  id: string;
  provider: string;
  network: string;
  chainId: number;
  state: SourceState;
  head: number | null;
  checkpoint: number;
  lag: number | null;
  eventsApplied: number;
  eventsPerSecond: number;
  etaSeconds: number | null;
  rangeSize: number;
  error: string | null;
  updatedAt: number;
}

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
  signals?: SignalsFn;
  clock?: () => number;
  /** Parse and decode eth_getLogs replies in the decode worker (decode-pool.ts). Default true. */
  decodeInWorker?: boolean;
  /**
   * The highest block this source may index, or null for no limit: the embedded devnet's saved
   * head, so that the index never holds blocks a crash of the devnet would take back.
   */
  maxHead?: () => number | null;
}

/** One part of a range: its bounds and its logs, requested when the range was planned. */
interface RangePart {
  from: number;
  to: number;
  logs: Promise<FetchedLog[]>;
}

/** A reorg deeper than the finality window: the source stops, the data stays served. */
class HaltError extends Error {}

/**
 * The sync loop of one source (docs/crawler.md): backfill with adaptive eth_getLogs ranges, then follow
 * the head; every range is applied with its checkpoint in one transaction; reorgs are detected by
 * parent hash and rolled back by replaying the journal.
 */
export class SourceSync {
  readonly reader: ChainReader;
  private readonly range: AdaptiveRange;
  private readonly clock: () => number;
  private cp = { blockNumber: 0, blockHash: "" };
  private head: number | null = null;
  private state: SourceState = "starting";
  private error: string | null = null;
  private eventsApplied = 0;
  // Exponentially weighted rates, for the progress line and the ETA.
  private eventRate = 0;
  private blockRate = 0;
  private lastProgressLog = 0;
  // Stops RPC calls in flight and their retries when the loop is asked to stop.
  private readonly stopping = new AbortController();

  constructor(
    readonly source: CrawlerSource,
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly options: SyncOptions,
    private readonly metrics?: CrawlerMetrics,
  ) {
    this.clock = options.clock ?? Date.now;
    // Every request in flight (the parts of a range and of the prefetched one, their timeouts and
    // retry waits) listens on this signal: more than Node's default of 10 is expected, not a leak.
    setMaxListeners(64, this.stopping.signal);
    const labels = { source: source.id };
    const rpc = createRpcClient({
      url: source.rpcUrl,
      signal: this.stopping.signal,
      timeoutMs: options.requestTimeoutMs,
      baseBackoffMs: options.backoffMs ?? 250,
      onRetry: (r) => {
        metrics?.rpcRetries.inc({ ...labels, fault: r.fault });
        logger.debug({ source: source.id, ...r }, "rpc retry");
      },
      onRequest: (r) => metrics?.rpcRequests.inc({ ...labels, outcome: r.outcome }),
    });
    this.reader = new ChainReader(rpc, source.chainId);
    this.range = new AdaptiveRange({ initial: options.initialRange, max: options.maxRange });
  }

  status(): SourceStatus {
    const lag = this.head === null ? null : Math.max(0, this.head - this.cp.blockNumber);
    return {
      id: this.source.id,
      provider: this.source.provider,
      network: this.source.network,
      chainId: this.source.chainId,
      state: this.state,
      head: this.head,
      checkpoint: this.cp.blockNumber,
      lag,
      eventsApplied: this.eventsApplied,
      eventsPerSecond: Math.round(this.eventRate),
      etaSeconds:
        lag !== null && lag > 0 && this.blockRate > 0
          ? Math.round(lag / this.blockRate)
          : lag === 0
            ? 0
            : null,
      rangeSize: this.range.size,
      error: this.error,
      updatedAt: this.clock(),
    };
  }

  /** Ends the loop: calls in flight and waits are cut short. */
  stop(): void {
    this.stopping.abort();
  }

  /**
   * Runs until `stop()` (or `external` aborts), the source halts, or (exitWhenSynced) it reaches
   * the head. Every wait and request listens on this source's own signal; an external one gets a
   * single listener, removed when the loop ends, so that many sources never pile up on it.
   */
  async run(external?: AbortSignal): Promise<SourceState> {
    const onAbort = () => this.stop();
    if (external?.aborted) this.stop();
    external?.addEventListener("abort", onAbort, { once: true });
    try {
      return await this.loop(this.stopping.signal);
    } finally {
      external?.removeEventListener("abort", onAbort);
    }
  }

  private async loop(signal: AbortSignal): Promise<SourceState> {
    const log = this.logger.child({ source: this.source.id });
    if (this.decodeArgs() !== undefined) void startLogDecoder();
    let failures = 0;
    let ready = false;
    while (!signal.aborted) {
      try {
        if (!ready) {
          if (!(await this.init(log))) return this.state;
          ready = true;
        }
        const progressed = await this.step(log);
        failures = 0;
        if (this.state === "retrying") this.setState(this.lagged() ? "backfill" : "live");
        this.error = null;
        if (!progressed) {
          if (this.options.exitWhenSynced && this.head !== null && this.cp.blockNumber >= this.head) break;
          await sleep(this.options.pollIntervalMs, signal);
        }
      } catch (e) {
        if (signal.aborted) break; // stopping: an interrupted call is not a failure
        if (e instanceof HaltError) {
          await this.halt(log, e.message);
          return this.state;
        }
        failures++;
        this.error = (e as Error).message;
        this.setState("retrying");
        const f = faultOf(e);
        const delay = Math.min(30_000, 2 * (this.options.backoffMs ?? 250) * 2 ** Math.min(failures - 1, 6));
        // RPC faults are expected and retried; anything else (store down, a bug) is logged loudly.
        if (f && RPC_FAULTS[f.fault].retryable)
          log.warn({ fault: f.fault, attempt: failures, delayMs: delay }, this.error);
        else log.error({ err: e, attempt: failures, delayMs: delay }, "sync step failed; retrying");
        await sleep(delay, signal);
      }
    }
    if (this.state !== "halted") this.setState("stopped");
    return this.state;
  }

  private lagged(): boolean {
    return this.head !== null && this.head - this.cp.blockNumber > this.options.finality;
  }

  private setState(state: SourceState): void {
    this.state = state;
    this.metrics?.halted.set({ source: this.source.id }, state === "halted" ? 1 : 0);
  }

  private async init(log: Logger): Promise<boolean> {
    // An RPC URL of the wrong chain would index another chain's logs under this network.
    const chainId = await this.reader.chainIdOfNode();
    if (chainId !== this.source.chainId) {
      // A configuration error, not a chain fact: the source stops without marking its checkpoint.
      this.error = `the RPC of ${this.source.network} (${redactUrl(this.source.rpcUrl)}) answers chain id ${chainId}, expected ${this.source.chainId}`;
      this.setState("halted");
      log.error(`source ${this.source.id} is halted: ${this.error}; to resume: ${this.advice()}`);
      return false;
    }
    const saved = await this.store.getCheckpoint(this.source.id);
    if (saved) this.cp = { blockNumber: saved.blockNumber, blockHash: saved.blockHash };
    else this.cp = { blockNumber: Math.max(-1, (await this.startBlock(log)) - 1), blockHash: "" };
    if (saved?.state === "halted") {
      this.error = saved.error;
      this.setState("halted");
      log.error(
        { error: saved.error, checkpoint: this.cp.blockNumber },
        `source ${this.source.id} is halted: ${saved.error}; to resume: ${this.advice()}`,
      );
      return false;
    }
    log.info(
      {
        rpc: redactUrl(this.source.rpcUrl),
        from: this.cp.blockNumber + 1,
        contracts: this.source.contracts.addresses,
      },
      "source starting",
    );
    this.setState("backfill");
    return true;
  }

  private advice(): string {
    return haltAdvice(this.source.id, this.cp.blockNumber, this.error);
  }

  private async startBlock(log: Logger): Promise<number> {
    const configured = this.source.contracts.startBlock;
    if (!this.source.discoverStartBlock) return configured;
    const head = await this.reader.head();
    let first: number | null = null;
    for (const address of new Set(Object.values(this.source.contracts.addresses))) {
      const b = await this.reader.deployBlock(address, head);
      if (b !== null && (first === null || b < first)) first = b;
    }
    log.info({ deployBlock: first }, "start block found by bisecting eth_getCode");
    return first ?? configured;
  }

  private async halt(log: Logger, message: string): Promise<void> {
    this.error = message;
    this.setState("halted");
    log.error(
      { checkpoint: this.cp.blockNumber },
      `source ${this.source.id} is halted: ${message}; to resume: ${this.advice()}`,
    );
    await this.store.setCheckpoint({
      sourceId: this.source.id,
      chainId: this.source.chainId,
      blockNumber: this.cp.blockNumber,
      blockHash: this.cp.blockHash,
      updatedAt: this.clock(),
      state: "halted",
      error: message,
    });
  }

  /** One unit of work; false when there was nothing to do (caught up). */
  private async step(log: Logger): Promise<boolean> {
    const limit = this.options.maxHead?.() ?? null;
    const chainHead = await this.reader.head();
    const head = limit === null ? chainHead : Math.min(chainHead, limit);
    this.head = head;
    const id = { source: this.source.id };
    this.metrics?.head.set(id, head);
    this.metrics?.lag.set(id, Math.max(0, head - this.cp.blockNumber));
    const { finality } = this.options;

    if (head <= this.cp.blockNumber) {
      // Nothing new. Near the head, check that our last block is still on the chain: a reorg to a
      // chain no longer than ours is only seen this way.
      if (this.cp.blockHash !== "" && this.cp.blockNumber - head <= finality) {
        const top = await this.reader.header(head);
        const known = head === this.cp.blockNumber ? this.cp.blockHash : await this.storedHash(head);
        if (known !== null && known !== top.hash) {
          await this.handleReorg(log, head);
          return true;
        }
      }
      if (this.state !== "live") {
        this.setState("live");
        log.info({ block: this.cp.blockNumber }, "caught up with the head");
      }
      return false;
    }

    const from = this.cp.blockNumber + 1;
    const unfinalizedFrom = head - finality + 1;
    const prefetched = this.prefetched?.from === from ? this.prefetched : null;
    this.prefetched = null;
    const to = prefetched ? prefetched.to : Math.min(head, from + this.range.size - 1);
    const bounds = prefetched?.parts ?? this.partsOf(from, to);
    const headers = new Map<number, BlockHeader>();
    if (!prefetched && to >= unfinalizedFrom) {
      // Headers before logs: logs read after the headers and carrying their hashes belong to the
      // checked chain; logs read first could miss those of a block that was replaced in between.
      const first = Math.max(from, unfinalizedFrom);
      const nums: number[] = [];
      for (let n = first; n <= to; n++) nums.push(n);
      let prev: BlockHeader | null = null;
      for (const h of await this.reader.headers(nums)) {
        if (prev && h.parentHash !== prev.hash) return true; // the chain moved under us: read again
        headers.set(h.number, h);
        prev = h;
      }
      const firstHeader = headers.get(from);
      if (firstHeader && this.cp.blockHash !== "" && firstHeader.parentHash !== this.cp.blockHash) {
        await this.handleReorg(log, head);
        return true;
      }
    }
    const parts = prefetched?.parts ?? this.fetchParts(bounds);
    // Each part's checkpoint is its last block's hash.
    const ends =
      prefetched?.ends ?? this.reader.headers(bounds.map((b) => b.to).filter((n) => !headers.has(n)));
    for (const h of await ends) headers.set(h.number, h);

    let rangeLogs = 0;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      let logs: FetchedLog[];
      try {
        logs = await part.logs;
      } catch (e) {
        const f = faultOf(e);
        if (f && RPC_FAULTS[f.fault].shrinks && this.range.size > this.range.min) {
          // Parts already applied stay applied: the next step starts after them, with less.
          this.range.failed((e as Error).message);
          this.metrics?.rangeSize.set(id, this.range.size);
          log.debug({ fault: f.fault, range: this.range.size }, "eth_getLogs range shrunk");
          return true;
        }
        throw e;
      }
      // Logs of unfinalized blocks must come from the blocks whose hashes we checkpoint.
      for (const l of logs) {
        const h = headers.get(l.blockNumber);
        if (h && h.hash !== l.blockHash) return true;
      }
      rangeLogs += logs.length;
      if (i === parts.length - 1) {
        this.range.succeeded(to - from + 1, rangeLogs);
        this.prefetch(to + 1, head);
      }
      await this.applyPart(log, part, logs, headers, head);
    }
    return true;
  }

  /** The parts [from, to] is fetched in (block-range.ts `parts`), within MAX_LOG_REQUESTS requests. */
  private partsOf(from: number, to: number): Array<{ from: number; to: number }> {
    const filters = Math.max(1, this.source.adapter.filters(this.source.contracts).length);
    const parts = Math.min(
      this.range.parts(to - from + 1),
      Math.max(1, Math.floor(MAX_LOG_REQUESTS / filters)),
    );
    return splitRange(from, to, parts);
  }

  /** What the decode worker needs to decode this source's logs, or undefined to decode here. */
  private decodeArgs(): { provider: Provider; contracts: SourceContracts } | undefined {
    const { adapter, contracts, provider } = this.source;
    // The worker knows the registry's adapters only (a test's own adapter decodes here).
    return this.options.decodeInWorker !== false && adapterFor(provider) === adapter
      ? { provider, contracts }
      : undefined;
  }

  /** Starts the log requests of every part at once; each is awaited in order by the step. */
  private fetchParts(bounds: ReadonlyArray<{ from: number; to: number }>): RangePart[] {
    const filters = this.source.adapter.filters(this.source.contracts);
    const decode = this.decodeArgs();
    return bounds.map((b) => {
      const logs = this.reader.logs(filters, b.from, b.to, decode);
      // Awaited in order by the step; a part left behind by an earlier failure must not be unhandled.
      logs.catch(() => {});
      return { ...b, logs };
    });
  }

  /** Decodes and writes one part of a range with its checkpoint: one transaction. */
  private async applyPart(
    log: Logger,
    part: RangePart,
    logs: FetchedLog[],
    headers: Map<number, BlockHeader>,
    head: number,
  ): Promise<void> {
    const id = { source: this.source.id };
    const { finality } = this.options;
    const unfinalizedFrom = head - finality + 1;
    const missing = [
      ...new Set(
        logs.filter((l) => l.blockTime === null && !headers.has(l.blockNumber)).map((l) => l.blockNumber),
      ),
    ];
    for (const h of await this.reader.headers(missing)) headers.set(h.number, h);
    const times = new Map<number, number>();
    for (const h of headers.values()) times.set(h.number, h.timestamp);

    const decodeIssues: DecodeIssue[] = [];
    const entries = journalEntriesOf(this.source, logs, times, decodeIssues);
    const top = headers.get(part.to) as BlockHeader;
    const recent: RecentBlock[] = [];
    for (const h of headers.values())
      if (h.number >= unfinalizedFrom && h.number >= part.from && h.number <= part.to)
        recent.push({ blockNumber: h.number, blockHash: h.hash, parentHash: h.parentHash });
    recent.sort((a, b) => a.blockNumber - b.blockNumber);
    const started = this.clock();
    const stats = await applyRange(
      this.store,
      this.source,
      {
        entries,
        checkpoint: {
          sourceId: this.source.id,
          chainId: this.source.chainId,
          blockNumber: part.to,
          blockHash: top.hash,
          updatedAt: started,
          state: head - part.to > finality ? "syncing" : "live",
          error: null,
        },
        recentBlocks: recent,
        pruneBelow: unfinalizedFrom - 1,
      },
      this.options.signals,
    );
    const elapsed = Math.max(1, this.clock() - started);
    this.metrics?.applySeconds.observe(id, elapsed / 1000);
    this.report(log, decodeIssues, stats.issues);

    this.cp = { blockNumber: part.to, blockHash: top.hash };
    this.eventsApplied += logs.length;
    this.metrics?.events.inc(id, logs.length);
    this.metrics?.checkpoint.set(id, part.to);
    this.metrics?.lag.set(id, head - part.to);
    this.metrics?.rangeSize.set(id, this.range.size);
    this.progress(log, logs.length, part.to - part.from + 1);
  }

  /**
   * In a backfill, asks the node for the next range's logs before this one is written, so that the
   * node's work overlaps ours. Only finalized ranges: near the head every range is checked first.
   */
  private prefetch(from: number, head: number): void {
    const to = Math.min(head - this.options.finality, from + this.range.size - 1);
    if (to < from) return;
    const parts = this.fetchParts(this.partsOf(from, to));
    const ends = this.reader.headers(parts.map((p) => p.to));
    // Awaited by the next step; a failure there is handled like any fetch failure.
    ends.catch(() => {});
    this.prefetched = { from, to, parts, ends };
  }

  private prefetched: {
    from: number;
    to: number;
    parts: RangePart[];
    ends: Promise<BlockHeader[]>;
  } | null = null;

  private progress(log: Logger, events: number, blocks: number): void {
    const now = this.clock();
    const dt = this.lastTick === 0 ? 0 : (now - this.lastTick) / 1000;
    this.lastTick = now;
    if (dt > 0) {
      const a = Math.min(1, dt / 5); // ~5 s smoothing window
      this.eventRate += a * (events / dt - this.eventRate);
      this.blockRate += a * (blocks / dt - this.blockRate);
    }
    if (this.head === null) return;
    const behind = this.head - this.cp.blockNumber;
    if (behind > this.options.finality) this.setState("backfill");
    else if (this.state === "backfill") this.setState("live");
    if (
      this.state === "backfill" &&
      now - this.lastProgressLog >= (this.options.progressIntervalMs ?? 5000)
    ) {
      this.lastProgressLog = now;
      const eta = this.blockRate > 0 ? Math.round(behind / this.blockRate) : null;
      log.info(
        {
          block: this.cp.blockNumber,
          head: this.head,
          behind,
          eventsPerSecond: Math.round(this.eventRate),
          etaSeconds: eta,
        },
        `backfill ${this.source.id}: block ${this.cp.blockNumber}/${this.head}, ${behind} behind, ${Math.round(this.eventRate)} events/s, ETA ${formatEta(eta)}`,
      );
    }
  }

  private lastTick = 0;

  private report(log: Logger, decodeIssues: DecodeIssue[], dataIssues: DataIssue[]): void {
    for (const i of decodeIssues) {
      this.metrics?.badData.inc({ source: this.source.id, reason: "decode" });
      log.warn(
        { block: i.blockNumber, logIndex: i.logIndex, contract: i.address },
        `skipped log: ${i.reason}`,
      );
    }
    for (const i of dataIssues) {
      this.metrics?.badData.inc({ source: this.source.id, reason: i.reason });
      log.warn({ tokenId: i.tokenId, reason: i.reason }, `bad chain data: ${i.detail}`);
    }
  }

  private async storedHash(n: number): Promise<string | null> {
    const [b] = await this.store.findRecentBlocks(this.source.id, n);
    return b && b.blockNumber === n ? b.blockHash : null;
  }

  /**
   * Walks back from the checkpoint over the stored hashes of unfinalized blocks to the highest
   * block still on the chain, then rolls back to it. No common ancestor within the finality
   * window: the source halts.
   */
  private async handleReorg(log: Logger, head: number): Promise<void> {
    const { finality } = this.options;
    const floor = this.cp.blockNumber - finality;
    const ancestor = await findCommonAncestor(
      this.reader,
      this.store,
      this.source.id,
      this.cp.blockNumber,
      head,
      finality,
    );
    this.metrics?.reorgs.inc({ source: this.source.id });
    if (!ancestor) {
      throw new HaltError(
        `reorg deeper than the finality window of ${finality} blocks on ${this.source.network}: block ${this.cp.blockNumber} ` +
          `(${this.cp.blockHash}) is no longer on the chain and no common ancestor was found down to block ${Math.max(0, floor)}; ` +
          `the source is halted and its data left as of block ${this.cp.blockNumber}`,
      );
    }
    const depth = this.cp.blockNumber - ancestor.blockNumber;
    const result = await rollbackTo(
      this.store,
      this.source,
      ancestor,
      "live",
      this.clock(),
      this.options.signals,
    );
    log.warn(
      {
        from: this.cp.blockNumber,
        ancestor: ancestor.blockNumber,
        depth,
        replayed: result.tokens,
        deleted: result.entriesDeleted,
      },
      `reorg of ${depth} blocks rolled back to block ${ancestor.blockNumber}`,
    );
    this.cp = { blockNumber: ancestor.blockNumber, blockHash: ancestor.blockHash };
  }
}
