/**
 * A run of failures of one repeated action (a poll, a flush, a lease renewal), so that an outage is
 * logged when it begins and when it ends instead of at every try: `failed()` is true only for the
 * first failure of a run, and `succeeded()` returns the run that just ended (null when none did).
 *
 * @example
 * const streak = createFailureStreak(Date.now);
 * if (streak.failed()) log.warn({ err }, "flush failed; retried quietly");
 * const ended = streak.succeeded();
 * if (ended) log.warn({ failures: ended.failures, outageMs: ended.ms }, "flush works again");
 */
export interface FailureStreak {
  /** Counts a failure; true when it begins a run (the one to log). */
  failed(): boolean;
  /** Ends the run, if any: its length in time and in failures. */
  succeeded(): { ms: number; failures: number } | null;
  /** Whether a run is under way. */
  readonly failing: boolean;
}

export function createFailureStreak(clock: () => number = Date.now): FailureStreak {
  let since: number | null = null;
  let failures = 0;
  return {
    failed() {
      failures++;
      if (since !== null) return false;
      since = clock();
      return true;
    },
    succeeded() {
      if (since === null) return null;
      const ended = { ms: clock() - since, failures };
      since = null;
      failures = 0;
      return ended;
    },
    get failing() {
      return since !== null;
    },
  };
}
