import type { Logger } from "pino";
import { createFailureStreak } from "../domain/failure-streak.js";
import { isAppError } from "../domain/errors.js";

/** How often a pass is tried while the store is away (its own interval, when longer, stays). */
const OUTAGE_RETRY_MS = 1_000;

/**
 * A pass run again `everyMs` after the previous one ended (never two at once), until `stop`, which
 * waits for the pass under way. The webhook deliverer and the winner.changed deriver run on one.
 *
 * A failed pass is logged at warn with its error, except while the store is unreachable: then the
 * first failure says so once, the passes go on quietly (at most once a second), and the first pass
 * that succeeds logs the store's return with the outage's length and failed passes. Before, each
 * loop logged a stack every 100 ms of an outage (about 150 lines a loop over 5 s).
 *
 * @example
 * const loop = new PollLoop(() => worker.tick(), 100, logger, "webhook worker pass");
 * loop.start(); … await loop.stop();
 */
export class PollLoop {
  stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  /** The passes failed since the store went away (as this loop saw it). */
  private readonly outage = createFailureStreak();

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly logger: Pick<Logger, "warn">,
    /** What a pass is, for the log: "webhook worker pass". */
    private readonly what: string,
  ) {}

  private failed(e: unknown): void {
    if (!isAppError(e) || e.code !== "STORE_UNAVAILABLE") {
      this.logger.warn({ err: e }, `${this.what} failed`);
      return;
    }
    if (!this.outage.failed()) return;
    const err = e as { message?: unknown };
    this.logger.warn(
      { cause: typeof err?.message === "string" ? err.message : String(e) },
      `${this.what} failed: the data store is unreachable; tried again every second, quietly, until it answers`,
    );
  }

  private succeeded(): void {
    const ended = this.outage.succeeded();
    if (ended === null) return;
    this.logger.warn(
      { outageMs: ended.ms, failedPasses: ended.failures },
      `${this.what}: the data store answers again`,
    );
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.pass()
        .then(
          () => this.succeeded(),
          (e: unknown) => this.failed(e),
        )
        .finally(() => {
          this.running = null;
          const wait = !this.outage.failing ? this.everyMs : Math.max(this.everyMs, OUTAGE_RETRY_MS);
          if (!this.stopped) this.timer = setTimeout(loop, wait);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
