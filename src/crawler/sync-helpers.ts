/** A sleep that ends early when `signal` aborts (a stopping crawler does not wait out its poll). */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/** `42s`, `3m05s`, `2h07m`; `unknown` without a rate. */
export function formatEta(seconds: number | null): string {
  if (seconds === null) return "unknown";
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, "0")}m`;
}

/**
 * What an operator does about a halted source, for the log, `/status` and `/readyz`. An RPC of
 * the wrong chain is a configuration error; anything else (a reorg deeper than the finality
 * window) is undone by rewinding the source to a block still on the chain.
 *
 * @example haltAdvice(sourceIdOf(provider, "BSC"), 1_200, "reorg deeper than …")
 */
export function haltAdvice(sourceId: string, checkpoint: number, error: string | null): string {
  if (error?.includes("answers chain id"))
    return `point the source's RPC URL at the right chain and restart (docs/operations.md, "Halted sources")`;
  return (
    `run \`omniname crawl --rewind ${sourceId}:<block>\` with a block still on the chain (a finality ` +
    `window or more below ${checkpoint}) while the chain is reachable; a running crawler resumes from it ` +
    `(docs/operations.md, "Halted sources")`
  );
}
