import type { Provider } from "../domain/providers.js";
import { adapterFor } from "../providers/adapters.js";
import type { SourceContracts } from "../providers/provider.js";
import { type AdaptiveRange, MAX_LOG_REQUESTS, splitRange } from "./block-range.js";
import type { BlockHeader, ChainReader } from "./chain-reader.js";
import type { CrawlerSource } from "./crawler-source.js";
import type { FetchedLog } from "./log-batch.js";

/** One part of a range: its bounds and its logs, requested when the range was planned. */
export interface RangePart {
  from: number;
  to: number;
  logs: Promise<FetchedLog[]>;
}

/** A range whose requests were started before the previous range was written. */
export interface PrefetchedRange {
  from: number;
  to: number;
  parts: RangePart[];
  /** The headers of each part's last block (each part's checkpoint is its last block's hash). */
  ends: Promise<BlockHeader[]>;
}

/**
 * Plans a range's eth_getLogs requests and starts them, and in a backfill starts the next range's
 * before this one is written, so that the node's work overlaps ours.
 *
 * @example
 * const parts = fetcher.fetchParts(fetcher.partsOf(100, 5_000)); // requests in flight
 * fetcher.prefetch(5_001, head, finality); … fetcher.takePrefetched(5_001)
 */
export class RangeFetcher {
  private prefetched: PrefetchedRange | null = null;

  constructor(
    private readonly source: CrawlerSource,
    private readonly reader: ChainReader,
    private readonly range: AdaptiveRange,
    /** Parse and decode eth_getLogs replies in the decode worker (decode-pool.ts). */
    private readonly decodeInWorker: boolean,
  ) {}

  /** What the decode worker needs to decode this source's logs, or undefined to decode here. */
  decodeArgs(): { provider: Provider; contracts: SourceContracts } | undefined {
    const { adapter, contracts, provider } = this.source;
    // The worker knows the registry's adapters only (a test's own adapter decodes here).
    return this.decodeInWorker && adapterFor(provider) === adapter ? { provider, contracts } : undefined;
  }

  /** The parts [from, to] is fetched in (block-range.ts `parts`), within MAX_LOG_REQUESTS requests. */
  partsOf(from: number, to: number): Array<{ from: number; to: number }> {
    const filters = Math.max(1, this.source.adapter.filters(this.source.contracts).length);
    const parts = Math.min(
      this.range.parts(to - from + 1),
      Math.max(1, Math.floor(MAX_LOG_REQUESTS / filters)),
    );
    return splitRange(from, to, parts);
  }

  /** Starts the log requests of every part at once; each is awaited in order by the step. */
  fetchParts(bounds: ReadonlyArray<{ from: number; to: number }>): RangePart[] {
    const filters = this.source.adapter.filters(this.source.contracts);
    const decode = this.decodeArgs();
    return bounds.map((b) => {
      const logs = this.reader.logs(filters, b.from, b.to, decode);
      // Awaited in order by the step; a part left behind by an earlier failure must not be unhandled.
      logs.catch(() => {});
      return { ...b, logs };
    });
  }

  /**
   * In a backfill, asks the node for the next range's logs before this one is written. Only
   * finalized ranges: near the head every range is checked first.
   */
  prefetch(from: number, head: number, finality: number): void {
    const to = Math.min(head - finality, from + this.range.size - 1);
    if (to < from) return;
    const parts = this.fetchParts(this.partsOf(from, to));
    const ends = this.reader.headers(parts.map((p) => p.to));
    // Awaited by the next step; a failure there is handled like any fetch failure.
    ends.catch(() => {});
    this.prefetched = { from, to, parts, ends };
  }

  /** The prefetched range starting at `from`, if any; any other prefetched range is dropped. */
  takePrefetched(from: number): PrefetchedRange | null {
    const p = this.prefetched?.from === from ? this.prefetched : null;
    this.prefetched = null;
    return p;
  }

  /** Forgets a prefetched range (the checkpoint moved by other means than this loop's writes). */
  dropPrefetched(): void {
    this.prefetched = null;
  }
}
