import type { ChangeFeed } from "./change-feed.port.js";
import type { AccountsTables, ProjectsStore } from "./accounts.port.js";
import type { ChangeLog } from "./change-log.port.js";
import type { CrawlerLog, SourceLocks } from "./crawler-log.port.js";
import type { DomainMap } from "./domain-map.port.js";
import type { ScoringData } from "./scoring-data.port.js";
import type { SettingsWinnerJobs } from "./settings-winner-jobs.port.js";
import type { SnapshotSink } from "./snapshot-sink.port.js";

export type Dialect = "sqlite" | "postgres";

/**
 * The store's own lifecycle: migrations, health, transactions. Every backend has it.
 *
 * @example
 * await store.migrate();
 * await store.transaction(async (tx) => { await tx.upsertDomain(d); await tx.appendJournal(entries); });
 */
export interface StoreConnection {
  readonly dialect: Dialect;
  migrate(): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
  /** Runs `fn` in one database transaction; the store passed in writes inside it. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on one consistent read snapshot of the store, without holding up writers: every
   * read of the store passed in sees the same committed state (a zone transfer at one serial).
   * SQLite: a read transaction on a connection of its own (WAL); PostgreSQL: REPEATABLE READ.
   */
  readSnapshot<T>(fn: (snapshot: Store) => Promise<T>): Promise<T>;
  /**
   * Deletes everything indexed from chains (the map, journal, checkpoints, recent blocks) in one
   * transaction; projects, keys, accounts and the KYC list stay. For a freshly deployed devnet,
   * whose chains are not the ones indexed before.
   */
  clearChainIndex(): Promise<void>;
  /** The change channel between processes sharing this store (PostgreSQL only; change-feed.port.ts). */
  readonly changes?: ChangeFeed;
  /** Per-source advisory locks for crawler election (PostgreSQL only; crawler-log.port.ts). */
  readonly sourceLocks?: SourceLocks;
  /**
   * Runs `fn` with the backend's bulk writer of a snapshot import (snapshot-sink.port.ts), in one
   * transaction: committed when `fn` resolves, rolled back when it throws. Both backends have it;
   * a store without it is written through the port in `transaction` (slower, same result).
   */
  withSnapshotSink?<T>(fn: (sink: SnapshotSink) => Promise<T>): Promise<T>;
}

/**
 * The store port: the parts below, one interface each, implemented by two real backends (SQLite
 * and PostgreSQL) on one Kysely query layer. A caller that needs one part takes that part's type;
 * the context holds the whole store.
 *
 * - `DomainMap` (domain-map.port.ts): domains, records, reverse records. Resolution reads it.
 * - `CrawlerLog` (crawler-log.port.ts): checkpoints, journal, recent blocks. The crawler's.
 * - `ChangeLog` (change-log.port.ts): the ordered log of map changes the change feed streams.
 * - `ScoringData` (scoring-data.port.ts): index-wide facts and the KYC list. The scoring jobs'.
 * - `SettingsWinnerJobs` (settings-winner-jobs.port.ts): settings changes whose winner.changed
 *   events the API processes append, page by page.
 * - `ProjectsStore` (accounts.port.ts): projects and API keys, the one owner of project lookups.
 * - `AccountsTables` (accounts.port.ts): the accounts feature's tables, for its repositories.
 *
 * @example
 * const store = await createStore({ databaseUrl: undefined, dataDir: "./data" });
 * const [alice] = await store.findDomainsByName(["alice.wallet"], {});
 */
export interface Store
  extends StoreConnection,
    DomainMap,
    CrawlerLog,
    ChangeLog,
    ScoringData,
    SettingsWinnerJobs,
    ProjectsStore,
    AccountsTables {}
