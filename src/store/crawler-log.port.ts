/** Where a source's crawl stands: the last block applied, and the sync state machine's state. */
export interface Checkpoint {
  sourceId: string;
  chainId: number;
  blockNumber: number;
  blockHash: string;
  updatedAt: number;
  state: string;
  error: string | null;
}

export interface JournalEntry {
  sourceId: string;
  chainId: number;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  txHash: string;
  contract: string;
  tokenId: string | null;
  /** JSON of the decoded event. */
  event: string;
  /** Epoch seconds of the block; null or absent when unknown. */
  blockTime?: number | null;
}

/** Time travel: entries up to a block (inclusive) or a block time (epoch seconds, inclusive). */
export type JournalBound = { block: number } | { time: number };

/** A source's first journal entry: the first block the index knows something of. */
export interface JournalStart {
  blockNumber: number;
  /** Epoch seconds, or null when unknown. */
  blockTime: number | null;
}

/** A recent block as the crawler saw it, kept for reorg detection. */
export interface RecentBlock {
  blockNumber: number;
  blockHash: string;
  parentHash: string;
}

/** Which crawler process writes a source, until when (epoch ms); see crawler/source-lease.ts. */
export interface SourceLease {
  sourceId: string;
  holder: string;
  expiresAt: number;
  acquiredAt: number;
  /** The chain head the writer last reported (null before its first report). */
  head: number | null;
  /** When (epoch ms) the writer's checkpoint last reached its head; null if never seen. */
  syncedAt: number | null;
  /** When (epoch ms) the writer last reported. */
  reportedAt: number | null;
}

/** What a source's writer reports on its lease row at each renewal (`/readyz` of every process). */
export interface SourceProgressReport {
  head: number | null;
  syncedAt: number | null;
  now: number;
}

/**
 * The crawler's log: per source, its checkpoint, the journal of decoded events it applied (replayed
 * when a reorg touches a token) and the recent block hashes it compares to detect a reorg. Only
 * the crawler (and snapshots) write it; the crawler's time travel (the API's `at` and `provenance`)
 * reads it too.
 *
 * @example
 * await log.appendJournal(entries);
 * await log.putRecentBlocks("uns-polygon", [{ blockNumber: 11, blockHash, parentHash }]);
 * await log.setCheckpoint({ sourceId: "uns-polygon", chainId: 137, blockNumber: 11, blockHash,
 *   updatedAt: Date.now(), state: "live", error: null });
 */
export interface CrawlerLog {
  getCheckpoint(sourceId: string): Promise<Checkpoint | null>;
  listCheckpoints(): Promise<Checkpoint[]>;
  setCheckpoint(checkpoint: Checkpoint): Promise<void>;
  deleteCheckpoint(sourceId: string): Promise<void>;

  /** Appends journal entries; an entry already present (same chain, block hash, log index, token) is skipped. Returns how many were new. */
  appendJournal(entries: JournalEntry[]): Promise<number>;
  /** Journal entries of a source for one token, in chain order. */
  findJournalByToken(sourceId: string, tokenId: string): Promise<JournalEntry[]>;
  /** Journal entries of a source above a block, in chain order. */
  findJournalAfter(sourceId: string, blockNumber: number): Promise<JournalEntry[]>;
  /** Deletes a source's journal entries above a block (reorg rollback); returns how many. */
  deleteJournalAfter(sourceId: string, blockNumber: number): Promise<number>;
  /** Journal entries of a source for many tokens, grouped by token, each group in chain order. */
  findJournalByTokens(sourceId: string, tokenIds: string[]): Promise<JournalEntry[]>;
  /** The distinct tokens (fold keys) of a source's journal entries above a block. */
  findJournalTokensAfter(sourceId: string, blockNumber: number): Promise<string[]>;
  /**
   * Time travel and provenance: `findJournalByTokens` up to a block or a time. On SQLite it reads
   * the last committed state (the API's reader connection).
   */
  findJournalUpTo(sourceId: string, tokenIds: string[], upTo: JournalBound): Promise<JournalEntry[]>;
  /** Time travel: the fold keys of a source's entries up to `upTo` whose events name `address` (lower case). */
  findJournalKeysMentioning(sourceId: string, address: string, upTo: JournalBound): Promise<string[]>;
  /** The block time (epoch seconds) of a source's last entry at or before `block`, or null. */
  findJournalTimeAt(sourceId: string, block: number): Promise<number | null>;
  /** A source's first journal entry (lowest block), or null when it has none. */
  findJournalStart(sourceId: string): Promise<JournalStart | null>;
  /** Every journal entry, in insertion order, in pages (snapshot export). */
  iterateJournal(pageSize?: number): AsyncIterable<JournalEntry[]>;

  /** Recent block hashes of a source (reorg detection). */
  putRecentBlocks(sourceId: string, blocks: RecentBlock[]): Promise<void>;
  /** A source's recent blocks at or above `fromBlock`, ascending. */
  findRecentBlocks(sourceId: string, fromBlock: number): Promise<RecentBlock[]>;
  /** Deletes a source's recent blocks above `above` (rollback) and/or below `below` (pruning). */
  deleteRecentBlocks(sourceId: string, range: { above?: number; below?: number }): Promise<void>;

  /**
   * Takes or renews the lease of a source for `holder` until `now + ttlMs` when it is free,
   * expired, or already `holder`'s; returns the lease as it now stands (held by whoever holds it).
   * `takeUnexpired` takes it from another holder even before it expires: only for a caller that
   * holds the source's advisory lock (SourceLocks), which proves the previous holder is gone.
   */
  acquireSourceLease(
    sourceId: string,
    holder: string,
    now: number,
    ttlMs: number,
    opts?: { takeUnexpired?: boolean },
  ): Promise<SourceLease>;
  /**
   * True when `holder` holds the source's lease, unexpired at `now`. Inside a transaction this is
   * the fence of a write: on PostgreSQL the row is locked (FOR SHARE) until the commit, so no
   * takeover commits in between; on SQLite the write lock serialises the same way.
   */
  holdsSourceLease(sourceId: string, holder: string, now: number): Promise<boolean>;
  /** Gives a lease up (clean shutdown), when `holder` holds it. */
  releaseSourceLease(sourceId: string, holder: string): Promise<void>;
  listSourceLeases(): Promise<SourceLease[]>;
  /** Records the writer's head and sync time on its lease row, when `holder` holds it. */
  reportSourceProgress(sourceId: string, holder: string, report: SourceProgressReport): Promise<void>;
}

/**
 * Session-level locks, one per source, held on one dedicated database connection (PostgreSQL
 * advisory locks; store/postgres/pg-source-locks.ts). The database frees a lock the moment its
 * connection ends, so a lock that can be taken proves the last holder is dead or gone: a standby
 * holding it may take the lease row before the row expires (crawler/source-lease.ts).
 */
export interface SourceLocks {
  /** Takes the source's lock (connecting first when needed); true when this process holds it. */
  tryLock(sourceId: string): Promise<boolean>;
  /** True while this process holds the lock (false once its connection is lost). */
  holds(sourceId: string): boolean;
  /** Gives the lock up (a no-op when not held). */
  unlock(sourceId: string): Promise<void>;
  close(): Promise<void>;
}
