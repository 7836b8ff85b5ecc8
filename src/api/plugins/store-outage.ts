import type { FastifyBaseLogger } from "fastify";
import { createFailureStreak } from "../../domain/failure-streak.js";

/** How often the store is asked whether it is back, while it is away. */
const PROBE_MS = 1_000;

/**
 * A store outage as two log lines instead of one per refused request: the first request refused
 * with 503 STORE_UNAVAILABLE logs that the store is away (with its cause, once), later refusals are
 * only counted (`omniname_api_refusals_total{reason="store"}` and here), and a probe of the store
 * (`ping`, every second while it is away) logs its return with the outage's length and refusals.
 * Before, every 503 was logged at error level with its stack: 5,412 lines (9.8 MB) from one
 * process over two 20 s outages.
 *
 * @example
 * const outage = createStoreOutageLog(app.log, () => store.ping());
 * outage.refused(err); // logs once per outage
 */
export interface StoreOutageLog {
  /** One request refused because the store is unreachable. */
  refused(cause: unknown): void;
  /** Whether an outage is under way (as far as this process has seen). */
  readonly down: boolean;
  close(): void;
}

export function createStoreOutageLog(
  logger: FastifyBaseLogger,
  ping: () => Promise<boolean>,
  clock: () => number = Date.now,
): StoreOutageLog {
  const streak = createFailureStreak(clock);
  let timer: NodeJS.Timeout | null = null;
  let probing = false;

  const probe = async () => {
    if (probing || !streak.failing) return;
    probing = true;
    try {
      if (!(await ping().catch(() => false))) return;
      const ended = streak.succeeded();
      if (ended === null) return;
      logger.warn(
        { outageMs: ended.ms, refused: ended.failures },
        "the data store answers again: requests are served",
      );
      if (timer !== null) clearInterval(timer);
      timer = null;
    } finally {
      probing = false;
    }
  };

  return {
    refused(cause) {
      if (!streak.failed()) return;
      const err = cause as { message?: unknown; code?: unknown } | null;
      logger.warn(
        {
          cause: typeof err?.message === "string" ? err.message : String(cause),
          code: typeof err?.code === "string" ? err.code : undefined,
        },
        "the data store is unreachable: requests that need it are answered 503 STORE_UNAVAILABLE (counted in omniname_api_refusals_total, not logged one by one) until it returns",
      );
      timer = setInterval(() => void probe(), PROBE_MS);
      timer.unref();
    },
    get down() {
      return streak.failing;
    },
    close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
