import type { Logger } from "pino";
import type { ChainReader } from "./chain-reader.js";
import type { SyncOptions } from "./crawler-source.js";

/**
 * The head limit of one sync step (the embedded devnet's last save, `maxHead`), and its raise:
 * when the source caught up with the limit while the chain is past it, the limit is asked to move
 * to the chain's head now (`awaitMaxHead`: the devnet saves through the head) while the step reads
 * the new blocks, rather than at the next head or poll, a second later. Nothing is written before
 * the limit covers it (`covers`).
 */
export class StepHeadLimit {
  /** The head the step works towards: the chain's, or the limit's when no raise is under way. */
  readonly head: number;
  private raising: Promise<number | null> | null = null;
  private read = 0;
  private limited = 0;

  /** The limit (read first), then the chain's head: a step's start. */
  static async open(
    options: Pick<SyncOptions, "maxHead" | "awaitMaxHead">,
    reader: Pick<ChainReader, "head">,
    checkpoint: number,
    log: Logger,
  ): Promise<StepHeadLimit> {
    const started = performance.now();
    const limit = options.maxHead?.() ?? null;
    const chainHead = await reader.head();
    return new StepHeadLimit(options, limit, chainHead, checkpoint, log, started);
  }

  private constructor(
    options: Pick<SyncOptions, "awaitMaxHead">,
    limit: number | null,
    chainHead: number,
    checkpoint: number,
    log: Logger,
    private readonly started: number,
  ) {
    if (limit !== null && limit < chainHead && limit <= checkpoint && options.awaitMaxHead) {
      this.raising = options.awaitMaxHead(chainHead).catch((e: unknown) => {
        log.debug({ err: e }, "the head limit did not move");
        return null;
      });
    }
    this.head = limit === null || this.raising !== null ? chainHead : Math.min(chainHead, limit);
  }

  /**
   * Whether blocks up to `to` may be written: at once without a raise; else once the raise
   * ended, false when it did not reach `to` (a save failed: the next head or poll tries again).
   */
  async covers(to: number): Promise<boolean> {
    this.read = performance.now();
    if (this.raising !== null) {
      if (((await this.raising) ?? -1) < to) return false;
      this.raising = null;
    }
    this.limited = performance.now();
    return true;
  }

  /**
   * Where a live block's time went (docs/crawler.md, "New heads"): reading it, waiting for the
   * head limit (the embedded devnet's save), writing it. Call after the part is written.
   */
  logLivePart(log: Logger, blocks: [number, number], logs: number): void {
    log.debug(
      {
        blocks,
        logs,
        readMs: Math.round(this.read - this.started),
        limitMs: Math.round(this.limited - this.read),
        writeMs: Math.round(performance.now() - this.limited),
      },
      "live part written",
    );
  }
}
