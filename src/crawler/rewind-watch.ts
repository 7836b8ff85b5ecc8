import type { CrawlerLog } from "../store/crawler-log.port.js";
import { sleep } from "./sync-helpers.js";

/**
 * Waits, polling every `pollMs`, until the checkpoint of a halted source is no longer halted:
 * `omniname crawl --rewind` (any process) moved it back and cleared the halt, or removed it (the
 * source starts over, from block -1). Null when `signal` aborts first. A failed read is tried
 * again at the next poll.
 *
 * @example const rewound = await waitForRewind(store, "abc-polygon", 1_000, signal);
 */
export async function waitForRewind(
  store: Pick<CrawlerLog, "getCheckpoint">,
  sourceId: string,
  pollMs: number,
  signal: AbortSignal,
): Promise<{ blockNumber: number } | null> {
  while (!signal.aborted) {
    await sleep(pollMs, signal);
    if (signal.aborted) break;
    const saved = await store.getCheckpoint(sourceId).catch(() => undefined);
    if (saved === undefined || saved?.state === "halted") continue;
    return { blockNumber: saved?.blockNumber ?? -1 };
  }
  return null;
}
