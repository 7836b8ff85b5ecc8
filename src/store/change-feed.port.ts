/**
 * What changed, told to every process that shares the store (docs/operations.md, "Change
 * channel"). Topics: `map` (the domain map committed), `key:<id>` (a key was created or revoked),
 * `project:<id>` (a project's settings, allowlists, plan or keys changed), and `*` (notifications
 * may have been lost, e.g. while the channel was down: drop every cache).
 *
 * Only the PostgreSQL backend has one (LISTEN/NOTIFY); SQLite processes share a file and see each
 * other's commits through the WAL (sqlite-commit-watch.ts).
 */
export interface ChangeFeed {
  /** True while the listening connection is up: caches may then rely on notifications. */
  readonly up: boolean;
  /** Calls `listener` with each topic as it arrives (own notifications included). Returns the unsubscribe. */
  on(listener: (topic: string) => void): () => void;
  /** Tells every process (this one included), once the current transaction (if any) commits. */
  publish(topic: string): Promise<void>;
}

/** How long a cache may answer without notifications while the channel is down (bounded staleness). */
export const CHANNEL_DOWN_TTL_MS = 1_000;

/** A TTL that falls back to CHANNEL_DOWN_TTL_MS while `feed` is down (or `ttlMs` without a feed). */
export function channelAwareTtl(feed: ChangeFeed | undefined, ttlMs: number): () => number {
  if (feed === undefined) return () => ttlMs;
  return () => (feed.up ? ttlMs : Math.min(ttlMs, CHANNEL_DOWN_TTL_MS));
}
