import type { Logger } from "pino";
import { formatEta } from "./sync-helpers.js";

const SOURCE_STATES = ["starting", "backfill", "live", "retrying", "halted", "stopped", "standby"] as const;
export type SourceState = (typeof SOURCE_STATES)[number];

/** What `/status` shows of one source. */
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

/**
 * A source's throughput: events applied, exponentially weighted event and block rates, and the
 * backfill progress line they feed (at most one per `intervalMs`).
 *
 * @example progress.applied(120, 1_000); progress.logBackfill(log, id, checkpoint, head)
 */
export class SourceProgress {
  eventsApplied = 0;
  private eventRate = 0;
  private blockRate = 0;
  private lastTick = 0;
  private lastLog = 0;

  constructor(
    private readonly clock: () => number,
    private readonly intervalMs: number,
  ) {}

  get eventsPerSecond(): number {
    return Math.round(this.eventRate);
  }

  /** Seconds to cover `lag` blocks at the current rate: 0 when caught up, null without a rate. */
  etaSeconds(lag: number | null): number | null {
    if (lag === 0) return 0;
    return lag !== null && lag > 0 && this.blockRate > 0 ? Math.round(lag / this.blockRate) : null;
  }

  /** Counts a written part of `events` events over `blocks` blocks. */
  applied(events: number, blocks: number): void {
    this.eventsApplied += events;
    const now = this.clock();
    const dt = this.lastTick === 0 ? 0 : (now - this.lastTick) / 1000;
    this.lastTick = now;
    if (dt > 0) {
      const a = Math.min(1, dt / 5); // ~5 s smoothing window
      this.eventRate += a * (events / dt - this.eventRate);
      this.blockRate += a * (blocks / dt - this.blockRate);
    }
  }

  /** The backfill progress line, when the last one is at least the interval old. */
  logBackfill(log: Logger, sourceId: string, checkpoint: number, head: number): void {
    const now = this.clock();
    if (now - this.lastLog < this.intervalMs) return;
    this.lastLog = now;
    const behind = head - checkpoint;
    const eta = this.blockRate > 0 ? Math.round(behind / this.blockRate) : null;
    log.info(
      { block: checkpoint, head, behind, eventsPerSecond: this.eventsPerSecond, etaSeconds: eta },
      `backfill ${sourceId}: block ${checkpoint}/${head}, ${behind} behind, ${this.eventsPerSecond} events/s, ETA ${formatEta(eta)}`,
    );
  }
}
