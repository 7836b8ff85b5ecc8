/**
 * A pass run again `everyMs` after the previous one ended (never two at once), until `stop`, which
 * waits for the pass under way. The webhook deliverer and the winner.changed deriver run on one.
 *
 * @example
 * const loop = new PollLoop(() => worker.tick(), 100, (e) => logger.warn({ err: e }, "pass failed"));
 * loop.start(); … await loop.stop();
 */
export class PollLoop {
  stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly onError: (e: unknown) => void,
  ) {}

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.pass()
        .catch(this.onError)
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(loop, this.everyMs);
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
