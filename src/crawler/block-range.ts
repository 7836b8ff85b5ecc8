/**
 * The size of the next eth_getLogs range. It grows after each success (faster while results stay
 * below the target count), halves on "too many results", response-size and timeout faults, and
 * follows a provider's hint ("try with this block range [0x1, 0x2]") when the error carries one.
 *
 * @example
 * const r = new AdaptiveRange({ initial: 1000, max: 50_000 });
 * r.succeeded(1000, 120); r.size // 2000
 * r.failed();             r.size // 1000
 */
export class AdaptiveRange {
  private current: number;
  readonly min: number;
  readonly max: number;
  /** Aim for about this many logs per request: large enough to amortize, small enough for memory. */
  readonly targetLogs: number;
  /** Logs per block of the last successful range; null before the first. */
  private density: number | null = null;
  /**
   * Blocks of the widest part seen at the density it was measured at: a part is never planned
   * more than twice as wide, so that a density learned on sparse blocks (a contract's deployment
   * block before a bulk mint) cannot plan one part over the whole dense chain.
   */
  private widest = 0;

  constructor(opts: { initial?: number; min?: number; max: number; targetLogs?: number }) {
    this.min = Math.max(1, opts.min ?? 1);
    this.max = Math.max(this.min, opts.max);
    this.targetLogs = opts.targetLogs ?? 10_000;
    this.current = clamp(opts.initial ?? Math.min(1000, this.max), this.min, this.max);
  }

  /**
   * The blocks of the next part of a range, `remaining` blocks left in it: about `PART_LOGS` logs
   * at the density seen last, one block while no density is known (the first part of a run), and
   * never more than twice the widest part seen (parts widen by doubling as they arrive: the
   * parts in flight hold at most twice the logs of the blocks seen, whatever the density ahead).
   * Each part is its own request and transaction, applied in order with a few in flight
   * (range-fetch.ts): the writer starts on the first part while the node serves the next ones, and
   * a dense range is never held in memory whole (a range's size in blocks says little about its
   * size in logs: a bulk-minted block can hold 10,000).
   */
  partBlocks(remaining: number): number {
    if (this.density === null) return Math.min(1, remaining);
    const blocks = this.density > 0 ? Math.ceil(PART_LOGS / this.density) : remaining;
    return Math.max(1, Math.min(remaining, blocks, 2 * this.widest));
  }

  /** True once a density is known: parts can be planned ahead. */
  get hasDensity(): boolean {
    return this.density !== null;
  }

  /** After a part of a range arrived: its density sizes the next parts, its width bounds them. */
  observed(blocks: number, logs: number): void {
    if (blocks <= 0) return;
    this.density = logs / blocks;
    // Far more logs than a part's aim: the blocks got denser, parts start again from this density.
    if (logs > 2 * PART_LOGS && blocks > 1) this.widest = Math.ceil(PART_LOGS / this.density);
    else this.widest = Math.max(this.widest, blocks);
  }

  get size(): number {
    return this.current;
  }

  /** After a range of `blocks` blocks returned `logs` logs. */
  succeeded(blocks: number, logs: number): void {
    if (blocks > 0) this.density = logs / blocks;
    if (blocks < this.current) return; // a short range at the head says nothing about capacity
    const byDensity = logs > 0 ? Math.floor((blocks * this.targetLogs) / logs) : this.current * 2;
    // Never more than double at once (density varies), never shrink below half on success.
    this.current = clamp(
      Math.min(this.current * 2, byDensity),
      Math.max(this.min, this.current >> 1),
      this.max,
    );
  }

  /**
   * After a range-shrinking fault; `message` may carry the provider's suggested range. With the
   * failed part's width, the next parts are at most half as wide.
   */
  failed(message?: string, partBlocks?: number): void {
    const hint = message ? hintedSize(message) : null;
    const next = hint !== null && hint < this.current ? hint : this.current >> 1;
    this.current = clamp(next, this.min, this.max);
    if (partBlocks !== undefined) this.widest = Math.max(1, Math.floor(partBlocks / 4));
  }
}

/**
 * About this many logs a part: enough to amortize a request and a commit, few enough that the
 * writer starts early and that the parts in flight hold a few MB.
 */
const PART_LOGS = 4_000;
/**
 * The largest eth_getLogs reply of a part of several blocks, in bytes (~8 times a part's aim at
 * ~1 KB a log): more fails as `part-too-large`, and the range and the parts shrink. A part is
 * planned from the density of the blocks before it; this bounds what it holds when the blocks it
 * covers are much denser (a bulk mint after empty blocks). One block is never split.
 */
export const PART_REPLY_BYTES = 32 << 20;
/** eth_getLogs requests in flight at most (parts × filters): an adapter with six filters gets one part. */
export const MAX_LOG_REQUESTS = 8;

/**
 * `parts` consecutive block ranges covering [from, to], as equal as whole blocks allow.
 *
 * @example splitRange(1, 10, 3) // [{ from: 1, to: 4 }, { from: 5, to: 7 }, { from: 8, to: 10 }]
 */
export function splitRange(from: number, to: number, parts: number): Array<{ from: number; to: number }> {
  const blocks = to - from + 1;
  const n = Math.max(1, Math.min(parts, blocks));
  const out: Array<{ from: number; to: number }> = [];
  let start = from;
  for (let i = 0; i < n; i++) {
    const size = Math.floor(blocks / n) + (i < blocks % n ? 1 : 0);
    out.push({ from: start, to: start + size - 1 });
    start += size;
  }
  return out;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, Math.floor(n)));
}

/** Alchemy/Infura: "… Try with this block range [0x10, 0x2a]." */
export function hintedSize(message: string): number | null {
  const m = /\[(0x[0-9a-f]+),\s*(0x[0-9a-f]+)\]/i.exec(message);
  if (!m) return null;
  const n = Number.parseInt(m[2], 16) - Number.parseInt(m[1], 16) + 1;
  return Number.isFinite(n) && n >= 1 ? n : null;
}
