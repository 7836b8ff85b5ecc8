import type { ChangeFeed } from "./change-feed.port.js";
import type { AccountsDb, ProjectsStore } from "./accounts.port.js";
import type { ChangeLog } from "./change-log.port.js";
import type { CrawlerLog, SourceLocks } from "./crawler-log.port.js";
import type { DomainMap } from "./domain-map.port.js";
import type { ScoringData } from "./scoring-data.port.js";
import type { SettingsWinnerJobs } from "./settings-winner-jobs.port.js";
import type { SnapshotSink } from "./snapshot-sink.port.js";

export type Dialect = "sqlite" | "postgres";

/**
 * The store's parts, each a plain object of functions over the backend's one handle (a connection
 * pool, or a transaction). A caller takes the part it uses: resolution the map, the crawler its
 * log, the console its tables.
 *
 * - `domainMap` (domain-map.port.ts): domains, records, reverse records. Resolution reads it.
 * - `crawlerLog` (crawler-log.port.ts): checkpoints, journal, recent blocks, source leases.
 * - `changeLog` (change-log.port.ts): the ordered log of map changes the change feed streams.
 * - `scoring` (scoring-data.port.ts): index-wide facts and the KYC list. The scoring jobs'.
 * - `winnerJobs` (settings-winner-jobs.port.ts): settings changes whose winner.changed events the
 *   API processes append, page by page.
 * - `projects` (accounts.port.ts): projects and API keys, the one owner of project lookups.
 * - `accounts` (accounts.port.ts): the accounts feature's tables, for its repositories.
 */
export interface StoreParts {
  readonly domainMap: DomainMap;
  readonly crawlerLog: CrawlerLog;
  readonly changeLog: ChangeLog;
  readonly scoring: ScoringData;
  readonly winnerJobs: SettingsWinnerJobs;
  readonly projects: ProjectsStore;
  readonly accounts: AccountsDb;
}

/**
 * The store: its parts, and its own lifecycle (migrations, health, transactions). Two real
 * backends build it (sqlite/sqlite-store.ts, postgres/postgres-store.ts) on one Kysely query layer
 * (kysely/kysely-parts.ts).
 *
 * @example
 * const store = await createStore({ databaseUrl: undefined, dataDir: "./data" });
 * const [alice] = await store.domainMap.findDomainsByName(["alice.wallet"], {});
 * await store.transaction(async (tx) => {
 *   await tx.domainMap.upsertDomain(d);
 *   await tx.crawlerLog.appendJournal(entries);
 * });
 */
export interface Store extends StoreParts {
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
   * a store without it is written through the parts in `transaction` (slower, same result).
   */
  withSnapshotSink?<T>(fn: (sink: SnapshotSink) => Promise<T>): Promise<T>;
}
