import type { DomainRecord, DomainWrite } from "../domain/types.js";
import type { Checkpoint, JournalEntry } from "./crawler-log.port.js";

/** One validated domain line of a snapshot: the domain, its records, the addresses naming it. */
export interface SnapshotDomain {
  domain: DomainWrite;
  records: DomainRecord[];
  /** Addresses whose reverse record (on the domain's network and provider) names this domain. */
  reverse: string[];
}

/**
 * A backend's bulk writer of a snapshot import, open on one transaction (`withSnapshotSink`):
 * nothing it writes is visible before the transaction commits, and all of it is gone if it rolls
 * back. Domains upsert by (network, provider, token id), in the order given (a new domain's id
 * follows the order of the file); a domain's records replace its stored ones; reverse records
 * upsert by (address, network, provider). Into an empty map a backend may bulk-load
 * (snapshot-bulk-load.ts): ids follow the file densely, and a token seen in two batches ends as
 * the upserts would leave it (the first line's id, the last line's columns and records), once
 * `withSnapshotSink`'s function has returned and before the commit.
 *
 * @example
 * await store.withSnapshotSink?.(async (sink) => {
 *   await sink.writeDomains([{ domain, records, reverse: [owner] }]);
 *   await sink.writeJournal(entries);
 * });
 */
export interface SnapshotSink {
  /** Writes a batch; a token listed twice in one batch keeps its last line. */
  writeDomains(batch: SnapshotDomain[]): Promise<void>;
  /** Appends journal entries (already known positions are skipped); returns how many were new. */
  writeJournal(entries: JournalEntry[]): Promise<number>;
  writeCheckpoints(checkpoints: Checkpoint[]): Promise<void>;
  /**
   * The form in which the sink takes batches already folded (`lastPerToken`) and encoded where the
   * lines were parsed (snapshot-encode.ts, the parse worker); absent: only `writeDomains`.
   */
  readonly encoding?: SnapshotEncoding;
  /** Writes such a batch: what `writeDomains` does with the batch it was encoded from. */
  writeEncoded?(batch: EncodedDomains): Promise<void>;
}

/**
 * What a backend's sink wants its batches as (`SnapshotSink.encoding`). `batch`: the domains a
 * message should hold (absent: the import's batch size), for a sink whose writes do not depend on
 * where a batch ends (the bulk loads: their multi-row statements and COPYs run across batches).
 */
export type SnapshotEncoding =
  | { store: "sqlite"; batch?: number }
  /** `bulkNext`: the bulk load's first id (rows carry their ids); null: the upsert (rows carry their place). */
  | { store: "postgres"; bulkNext: number | null; batch?: number };

/**
 * A batch's values for SQLite's prepared statements: DOMAIN_COLUMNS per domain, in order; each
 * domain's records as (key, value, native key, native value), `recordCounts[i]` of them; each
 * domain's reverse addresses, `reverseCounts[i]` of them.
 */
export interface SqliteBatch {
  n: number;
  domains: Array<string | number | null>;
  recordCounts: number[];
  records: string[];
  reverseCounts: number[];
  reverse: string[];
}

/** A batch as PostgreSQL COPY text (one per table; the rows' first column is an id or a place). */
export interface PgBatch {
  n: number;
  domains: string;
  records: string;
  reverse: string;
}

/** An encoded batch as the parse worker hands it over (SQLite values packed in one string when they can be). */
export type EncodedDomains =
  | { store: "sqlite"; n: number; packed: string | null; columns: SqliteBatch | null }
  | { store: "postgres"; n: number; text: PgBatch };
