import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import { redactUrl } from "../config/redact.js";
import { AdaptiveRange } from "./block-range.js";
import type { BlockHeader, ChainReader } from "./chain-reader.js";
import type { CrawlerSource, CrawlerStore, SourceContext, SyncOptions } from "./crawler-source.js";
import type { CrawlerMetrics } from "./crawler-metrics.js";
import { startLogDecoder } from "./decode-pool.js";
import type { FetchedLog } from "./log-batch.js";
import { writePart } from "./part-writer.js";
import { RangeFetcher, type RangePart } from "./range-fetch.js";
import { linkedHeaders, SpareHeaders } from "./range-headers.js";
import { type BlockRef, isBeyondFinality, rollBackReorg, tipReplaced } from "./reorg.js";
import { faultOf, RPC_FAULTS } from "./rpc-faults.js";
import { SourceProgress, type SourceState, type SourceStatus } from "./source-progress.js";
import { createSourceReader } from "./source-rpc.js";
import { StepHeadLimit } from "./head-limit.js";
import { type HeadWatch, watchNewHeads } from "./new-heads.js";
import { findStartBlock } from "./start-block.js";
import { waitForRewind } from "./rewind-watch.js";
import { haltAdvice, sleep } from "./sync-helpers.js";

/**
 * The sync loop of one source (docs/crawler.md): the state machine of starting, backfill, live,
 * retrying and halted. Backfill with adaptive eth_getLogs ranges (range-fetch.ts), then follow the
 * head; every range is applied with its checkpoint in one transaction; reorgs are detected by
 * parent hash and rolled back by replaying the journal (reorg.ts).
 */
export class SourceSync {
  readonly reader: ChainReader;
  private readonly range: AdaptiveRange;
  private readonly fetcher: RangeFetcher;
  private readonly progress: SourceProgress;
  private readonly clock: () => number;
  private cp: BlockRef = { blockNumber: 0, blockHash: "" };
  private head: number | null = null;
  private state: SourceState = "starting";
  private error: string | null = null;
  /** Halted with the halt recorded on the checkpoint (a deep reorg), which a rewind clears. */
  private checkpointHalted = false;
  /** Headers a step read and did not apply, for the next step (range-headers.ts). */
  private readonly spare = new SpareHeaders();
  // Stops RPC calls in flight and their retries when the loop is asked to stop.
  private readonly stopping = new AbortController();

  constructor(
    readonly source: CrawlerSource,
    private readonly store: CrawlerStore,
    private readonly logger: Logger,
    private readonly options: SyncOptions,
    private readonly metrics?: CrawlerMetrics,
  ) {
    this.clock = options.clock ?? Date.now;
    // Every request in flight (the parts of a range and of the prefetched one, their timeouts and
    // retry waits) listens on this signal: more than Node's default of 10 is expected, not a leak.
    setMaxListeners(64, this.stopping.signal);
    this.reader = createSourceReader(
      source,
      {
        signal: this.stopping.signal,
        timeoutMs: options.requestTimeoutMs,
        backoffMs: options.backoffMs ?? 250,
      },
      logger,
      metrics,
    );
    this.range = new AdaptiveRange({ initial: options.initialRange, max: options.maxRange });
    this.fetcher = new RangeFetcher(source, this.reader, this.range, options.decodeInWorker !== false);
    this.progress = new SourceProgress(this.clock, options.progressIntervalMs ?? 5000);
  }

  /** Blocks between the checkpoint and the head; 0 before the head is known. */
  private behind(): number {
    return this.head === null ? 0 : this.head - this.cp.blockNumber;
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
      eventsApplied: this.progress.eventsApplied,
      eventsPerSecond: this.progress.eventsPerSecond,
      etaSeconds: this.progress.etaSeconds(lag),
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
    if (this.fetcher.decodeArgs() !== undefined) void startLogDecoder();
    const headsUrl = this.options.newHeadsUrl?.(this.source) ?? null;
    const heads = headsUrl === null ? null : watchNewHeads(headsUrl, log);
    try {
      return await this.steps(log, signal, heads);
    } finally {
      heads?.close();
    }
  }

  private async steps(log: Logger, signal: AbortSignal, heads: HeadWatch | null): Promise<SourceState> {
    let failures = 0;
    let ready = false;
    while (!signal.aborted) {
      try {
        if (!ready) {
          if (!(await this.init(log))) {
            if (await this.awaitRewind(log, signal)) continue;
            return this.state;
          }
          ready = true;
        }
        const progressed = await this.step(log);
        failures = 0;
        if (this.state === "retrying")
          this.setState(this.behind() > this.options.finality ? "backfill" : "live");
        this.error = null;
        if (!progressed) {
          if (this.options.exitWhenSynced && this.head !== null && this.cp.blockNumber >= this.head) break;
          // A new head over the WebSocket wakes the source at once; the interval is the fallback.
          if (heads) await heads.next(this.options.pollIntervalMs, signal);
          else await sleep(this.options.pollIntervalMs, signal);
        }
      } catch (e) {
        if (signal.aborted) break; // stopping: an interrupted call is not a failure
        if (isBeyondFinality(e)) {
          await this.halt(log, e.message);
          if (!(await this.awaitRewind(log, signal))) return this.state;
          ready = false;
          continue;
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

  /**
   * A source halted at its checkpoint waits for `omniname crawl --rewind` (another process) to
   * move the checkpoint and clear the halt, then starts again from it: true when that happened,
   * false when the loop is to end (stopped, exitWhenSynced, or a halt no rewind clears).
   */
  private async awaitRewind(log: Logger, signal: AbortSignal): Promise<boolean> {
    if (this.options.exitWhenSynced || !this.checkpointHalted) return false;
    const { crawlerLog } = this.store;
    const rewound = await waitForRewind(crawlerLog, this.source.id, this.options.pollIntervalMs, signal);
    if (!rewound) return false;
    log.info({ block: rewound.blockNumber }, `source ${this.source.id} was rewound: resuming`);
    this.checkpointHalted = false;
    this.error = null;
    this.fetcher.dropPrefetched();
    this.setState("starting");
    return true;
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
    const saved = await this.store.crawlerLog.getCheckpoint(this.source.id);
    if (saved) this.cp = { blockNumber: saved.blockNumber, blockHash: saved.blockHash };
    else
      this.cp = {
        blockNumber: Math.max(-1, (await findStartBlock(this.reader, this.source, log)) - 1),
        blockHash: "",
      };
    if (saved?.state === "halted") {
      this.checkpointHalted = true;
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

  private async halt(log: Logger, message: string): Promise<void> {
    this.checkpointHalted = true;
    this.error = message;
    this.setState("halted");
    log.error(
      { checkpoint: this.cp.blockNumber },
      `source ${this.source.id} is halted: ${message}; to resume: ${this.advice()}`,
    );
    await this.store.crawlerLog.setCheckpoint({
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
    // Taken by this step alone: given back below only when it ends normally.
    const spare = this.spare.take();
    const limits = await StepHeadLimit.open(this.options, this.reader, this.cp.blockNumber, log);
    const head = limits.head;
    this.head = head;
    const id = { source: this.source.id };
    this.metrics?.head.set(id, head);
    this.metrics?.lag.set(id, Math.max(0, head - this.cp.blockNumber));
    const { finality } = this.options;

    if (head <= this.cp.blockNumber) {
      // Nothing new: our last block must still be on the chain.
      if (await tipReplaced(this.context(log), this.cp, head)) {
        await this.handleReorg(log, head);
        return true;
      }
      if (this.state !== "live") {
        this.setState("live");
        log.info({ block: this.cp.blockNumber }, "caught up with the head");
      }
      return false;
    }

    const from = this.cp.blockNumber + 1;
    const unfinalizedFrom = head - finality + 1;
    const prefetched = this.fetcher.takePrefetched(from);
    const to = prefetched ? prefetched.to : Math.min(head, from + this.range.size - 1);
    let headers = new Map<number, BlockHeader>();
    if (!prefetched && to >= unfinalizedFrom) {
      // Headers before logs: logs read after the headers and carrying their hashes belong to the
      // checked chain; logs read first could miss those of a block that was replaced in between.
      const linked = await linkedHeaders(this.reader, Math.max(from, unfinalizedFrom), to, spare);
      if (linked === null) return true; // the chain moved under us: read again
      headers = linked;
      const firstHeader = headers.get(from);
      if (firstHeader && this.cp.blockHash !== "" && firstHeader.parentHash !== this.cp.blockHash) {
        await this.handleReorg(log, head);
        return true;
      }
    }
    // The spare headers past this range, for the next step.
    const later = spare ? [...spare].filter(([n]) => n > to) : [];
    // Parts are requested a few ahead of the writer (range-fetch.ts): part i+1… are on their way
    // while part i is written.
    const parts = prefetched ?? this.fetcher.open(from, to, headers);

    let rangeLogs = 0;
    for (let i = 0; ; i++) {
      const part = parts.part(i);
      if (part === null) break;
      let logs: FetchedLog[];
      try {
        logs = await part.logs;
      } catch (e) {
        const f = faultOf(e);
        const several = part.to > part.from;
        if (!f || !RPC_FAULTS[f.fault].shrinks || (!several && this.range.size <= this.range.min)) throw e;
        // Later ranges are smaller and their parts narrower.
        this.range.failed((e as Error).message, part.to - part.from + 1);
        this.metrics?.rangeSize.set(id, this.range.size);
        if (several) {
          // Asked again as two halves, in place; the parts already requested after it stay (the
          // node is not asked for their blocks twice).
          parts.split(i);
          log.debug(
            { fault: f.fault, range: this.range.size, part: [part.from, part.to] },
            "eth_getLogs part split",
          );
          i--;
          continue;
        }
        // One block: parts already applied stay applied; the next step starts after them.
        this.spare.keep([...headers, ...later], part.from);
        log.debug({ fault: f.fault, range: this.range.size }, "eth_getLogs range shrunk");
        return true;
      }
      // Each part's checkpoint is its last block's hash (a failure here is retried as any step's).
      const end = await part.end;
      if (end) headers.set(end.number, end);
      // Logs of unfinalized blocks must come from the blocks whose hashes we checkpoint.
      for (const l of logs) {
        const h = headers.get(l.blockNumber);
        if (h && h.hash !== l.blockHash) return true;
      }
      if (!(await limits.covers(to))) return false;
      rangeLogs += logs.length;
      if (part.to === to) {
        this.range.succeeded(to - from + 1, rangeLogs);
        this.fetcher.prefetch(to + 1, head, finality);
      }
      await this.applyPart(log, part, logs, headers, head);
      if (this.state === "live") limits.logLivePart(log, [part.from, part.to], logs.length);
    }
    this.spare.keep(later, to + 1);
    return true;
  }

  /** Writes one part (part-writer.ts) and moves the checkpoint, metrics, progress and state on. */
  private async applyPart(
    log: Logger,
    part: RangePart,
    logs: FetchedLog[],
    headers: Map<number, BlockHeader>,
    head: number,
  ): Promise<void> {
    this.cp = await writePart(this.context(log), part, logs, headers, head);
    this.metrics?.rangeSize.set({ source: this.source.id }, this.range.size);
    this.progress.applied(logs.length, part.to - part.from + 1);
    // Backfill or live by the distance to the head; the backfill's progress line.
    if (this.head === null) return;
    if (this.behind() > this.options.finality) this.setState("backfill");
    else if (this.state === "backfill") this.setState("live");
    if (this.state === "backfill")
      this.progress.logBackfill(log, this.source.id, this.cp.blockNumber, this.head);
  }

  private async handleReorg(log: Logger, head: number): Promise<void> {
    this.cp = await rollBackReorg(this.context(log), this.cp, head);
  }

  private context(log: Logger): SourceContext {
    return {
      source: this.source,
      store: this.store,
      reader: this.reader,
      finality: this.options.finality,
      signals: this.options.signals,
      clock: this.clock,
      log,
      metrics: this.metrics,
      changeRetentionMs: this.options.changeRetentionMs,
    };
  }
}
