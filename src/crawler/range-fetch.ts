import type { Provider } from "../domain/providers.js";
import { adapterFor } from "../providers/adapters.js";
import type { SourceContracts } from "../providers/provider.js";
import { type AdaptiveRange, MAX_LOG_REQUESTS } from "./block-range.js";
import type { BlockHeader, ChainReader } from "./chain-reader.js";
import type { CrawlerSource } from "./crawler-source.js";
import type { FetchedLog } from "./log-batch.js";

/** One part of a range: its bounds, its logs and its last block's header, requested together. */
export interface RangePart {
  from: number;
  to: number;
  logs: Promise<FetchedLog[]>;
  /** The header of `to` (each part's checkpoint is its last block's hash), or null when known. */
  end: Promise<BlockHeader | null>;
}

/** What a taken part is replaced with: its bounds are no longer needed, nor its logs. */
const RELEASED: RangePart = { from: -1, to: -1, logs: Promise.resolve([]), end: Promise.resolve(null) };

/**
 * The parts of one range, planned and requested as the writer goes: part i+1…i+ahead are in
 * flight while part i is written, and no further, so that memory holds a bounded number of parts
 * whatever the range's size (the pipeline node → decode worker → writer, with a bounded queue).
 * Each part's size follows the density of the latest part to arrive (AdaptiveRange.partBlocks);
 * before any density is known only the first part (one block) is in flight.
 *
 * @example
 * const parts = fetcher.open(100, 5_000, headers);
 * for (let i = 0, p; (p = parts.part(i)); i++) await write(await p.logs);
 */
export class RangeParts {
  private readonly started: RangePart[] = [];
  /** Parts before this index were taken and let go. */
  private released = 0;
  /** The first block not planned yet. */
  private next: number;

  constructor(
    readonly from: number,
    readonly to: number,
    private readonly range: AdaptiveRange,
    private readonly request: (from: number, to: number) => RangePart,
    private readonly ahead: number,
  ) {
    this.next = from;
    this.fill(0);
  }

  /**
   * Part `i` (started with the ones after it, up to `ahead`), or null after the last one. Parts
   * are taken in order: asking for part i lets go of the ones before it, so that a written part's
   * logs are not kept until the end of a long range.
   */
  part(i: number): RangePart | null {
    this.fill(i);
    for (let j = this.released; j < i; j++) this.started[j] = RELEASED;
    this.released = Math.max(this.released, i);
    return this.started[i] ?? null;
  }

  /**
   * Part `i`, of several blocks, failed for asking too much: it is replaced by its two halves,
   * requested now; the parts after it stay as they are.
   */
  split(i: number): void {
    const p = this.started[i];
    if (p === undefined || p === RELEASED || p.to <= p.from) throw new Error(`part ${i} cannot be split`);
    const mid = p.from + Math.floor((p.to - p.from + 1) / 2) - 1;
    this.started.splice(i, 1, this.request(p.from, mid), this.request(mid + 1, p.to));
  }

  private fill(i: number): void {
    // Parts after the first wait for a density to size them (one part at a time until then).
    const limit = i + (this.range.hasDensity ? this.ahead : 1);
    while (this.started.length < limit && this.next <= this.to) {
      const blocks = this.range.partBlocks(this.to - this.next + 1);
      const part = this.request(this.next, this.next + blocks - 1);
      this.next += blocks;
      this.started.push(part);
    }
  }
}

/**
 * Parts requested ahead of the one being written: enough for the node and the decode worker to
 * stay ahead of the writer, few enough that memory holds a few parts (~4,000 logs each, a whole
 * block's when one block holds more) per source; never more than MAX_LOG_REQUESTS requests, so an
 * adapter with many filters gets fewer parts (ENS's six: one).
 */
export function partsAhead(filters: number): number {
  return Math.max(1, Math.min(MAX_PARTS_AHEAD, Math.floor(MAX_LOG_REQUESTS / Math.max(1, filters))));
}

const MAX_PARTS_AHEAD = 3;

/**
 * Plans a range's eth_getLogs requests part by part and starts them ahead of the writer; in a
 * backfill starts the next range's first parts before this one's last is written, so that the
 * node's work overlaps ours.
 *
 * @example
 * const parts = fetcher.open(100, 5_000, headers); // first parts in flight
 * fetcher.prefetch(5_001, head, finality); … fetcher.takePrefetched(5_001)
 */
export class RangeFetcher {
  private prefetched: RangeParts | null = null;

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

  /**
   * The parts of [from, to], the first ones requested now. `known` holds headers already read (the
   * finality window's): a part ending on one of them asks for no header.
   */
  open(from: number, to: number, known: ReadonlyMap<number, BlockHeader> = new Map()): RangeParts {
    const filters = this.source.adapter.filters(this.source.contracts);
    const decode = this.decodeArgs();
    const ahead = partsAhead(filters.length);
    return new RangeParts(
      from,
      to,
      this.range,
      (a, b) => {
        const logs = this.reader.logs(filters, a, b, decode).then((list) => {
          this.range.observed(b - a + 1, list.length);
          return list;
        });
        const end = known.has(b) ? Promise.resolve(null) : this.reader.header(b);
        // Awaited in order by the step; a part left behind by an earlier failure must not be unhandled.
        logs.catch(() => {});
        end.catch(() => {});
        return { from: a, to: b, logs, end };
      },
      ahead,
    );
  }

  /**
   * In a backfill, asks the node for the next range's first parts before this one's last is
   * written. Only finalized ranges: near the head every range is checked first.
   */
  prefetch(from: number, head: number, finality: number): void {
    const to = Math.min(head - finality, from + this.range.size - 1);
    if (to < from) return;
    this.prefetched = this.open(from, to);
  }

  /** The prefetched range starting at `from`, if any; any other prefetched range is dropped. */
  takePrefetched(from: number): RangeParts | null {
    const p = this.prefetched?.from === from ? this.prefetched : null;
    this.prefetched = null;
    return p;
  }

  /** Forgets a prefetched range (the checkpoint moved by other means than this loop's writes). */
  dropPrefetched(): void {
    this.prefetched = null;
  }
}
