import { type Kysely, sql, type Transaction } from "kysely";
import * as changeLog from "./kysely/change-log.queries.js";
import * as crawlerLog from "./kysely/crawler-log.queries.js";
import * as map from "./kysely/domain-map.queries.js";
import * as bulk from "./kysely/domain-map-bulk.queries.js";
import * as journalHistory from "./kysely/journal-history.queries.js";
import * as journal from "./kysely/journal.queries.js";
import * as scans from "./kysely/domain-map-scans.queries.js";
import * as projects from "./kysely/projects.queries.js";
import * as rescoreState from "./kysely/rescore-state.queries.js";
import * as scoring from "./kysely/scoring-data.queries.js";
import * as winnerJobs from "./kysely/settings-winner-jobs.queries.js";
import type { AccountsDb } from "./accounts.port.js";
import { beginMigrationTransaction, isMissingTable, type MigrationsTable } from "./migration-lock.js";
import { MIGRATIONS } from "./migrations.js";
import type { Database } from "./schema.js";
import type { Dialect, Store } from "./store.js";

/** What was indexed from chains, in deletion order (clearChainIndex). */
const CHAIN_TABLES = [
  "records",
  "reverse_records",
  "domains",
  "journal",
  "checkpoints",
  "crawler_blocks",
] as const;
// The change log is kept: its cursors stay valid, and its events age out of the retention window.

/** The arguments of a port method: each method below hands them, with its handle, to its part's query. */
type Args<K extends keyof Store> = Store[K] extends (...a: infer A) => unknown ? A : never;

/**
 * The Kysely implementation of the store port, shared by both backends. Each part's queries live
 * in kysely/<part>.queries.ts; this class binds them to one handle (a connection, or a transaction
 * in `withDb`). Backends differ only in how the Kysely instance is built and, for SQLite, in a
 * prepared-statement fast path for reads (sqlite/sqlite-store.ts).
 */
export class KyselyStore implements Store {
  constructor(
    readonly dialect: Dialect,
    /** The backend's own handle: every part's queries run on it. Not part of the port. */
    readonly db: Kysely<Database>,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  get accountsDb(): AccountsDb {
    return this.db as unknown as AccountsDb;
  }

  /**
   * Applies the pending migrations. Many processes may start at once on a new database (a deploy
   * of several replicas): they take turns through one lock held for the whole transaction (an
   * advisory lock on PostgreSQL, `begin immediate` on SQLite), so each sees what the one before it
   * applied and none races another's inserts or DDL. A store already up to date takes no lock.
   */
  async migrate(): Promise<void> {
    if ((await this.pendingMigrations(this.db)).length === 0) return;
    await this.db.connection().execute(async (conn) => {
      await beginMigrationTransaction(conn as unknown as Kysely<unknown>, this.dialect);
      try {
        await sql`create table if not exists omniname_migrations (name text primary key, applied_at bigint not null)`.execute(
          conn,
        );
        const db = conn as unknown as Kysely<MigrationsTable>;
        for (const m of await this.pendingMigrations(conn)) {
          await db
            .insertInto("omniname_migrations")
            .values({ name: m.name, applied_at: Date.now() })
            .execute();
          await m.up(conn as unknown as Kysely<unknown>, this.dialect);
        }
        await sql`commit`.execute(conn);
      } catch (e) {
        await sql`rollback`.execute(conn).catch(() => {});
        throw e;
      }
    });
  }

  /** The migrations not yet recorded (all of them while the table does not exist). */
  private async pendingMigrations(conn: Kysely<Database>): Promise<Array<(typeof MIGRATIONS)[number]>> {
    let done: Set<string>;
    try {
      const db = conn as unknown as Kysely<MigrationsTable>;
      done = new Set(
        (await db.selectFrom("omniname_migrations").select("name").execute()).map((r) => r.name),
      );
    } catch (e) {
      if (!isMissingTable(e)) throw e;
      done = new Set();
    }
    return MIGRATIONS.filter((m) => !done.has(m.name));
  }

  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.onClose();
  }

  /** A store over the transaction; overridden by the SQLite backend to drop its read fast path. */
  protected withDb(db: Kysely<Database>): Store {
    return new KyselyStore(this.dialect, db);
  }

  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if ((this.db as Transaction<Database>).isTransaction) return fn(this);
    return this.db.transaction().execute((trx) => fn(this.withDb(trx)));
  }

  readSnapshot<T>(fn: (snapshot: Store) => Promise<T>): Promise<T> {
    if ((this.db as Transaction<Database>).isTransaction) return fn(this);
    return this.db
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute((trx) => fn(this.withDb(trx)));
  }

  /** Runs queries on this handle inside one transaction (this one, when already in one). */
  private inTransaction<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    if ((this.db as Transaction<Database>).isTransaction) return fn(this.db);
    return this.db.transaction().execute(fn);
  }

  async clearChainIndex(): Promise<void> {
    await this.inTransaction(async (db) => {
      // Children before parents: records and reverse records reference domains.
      for (const t of CHAIN_TABLES) await db.deleteFrom(t).execute();
    });
  }

  // The map (domain-map.port.ts).
  upsertDomain(...a: Args<"upsertDomain">) {
    return map.upsertDomain(this.db, ...a);
  }
  findDomainById(...a: Args<"findDomainById">) {
    return map.findDomainById(this.db, ...a);
  }
  findDomainByToken(...a: Args<"findDomainByToken">) {
    return map.findDomainByToken(this.db, ...a);
  }
  deleteDomain(...a: Args<"deleteDomain">) {
    return map.deleteDomain(this.db, ...a);
  }
  updateDomainSignals(...a: Args<"updateDomainSignals">) {
    return map.updateDomainSignals(this.db, ...a);
  }
  updateDomainSignalsMany(...a: Args<"updateDomainSignalsMany">) {
    return bulk.updateDomainSignalsMany(this.db, ...a);
  }
  replaceRecords(...a: Args<"replaceRecords">) {
    return map.replaceRecords(this.db, ...a);
  }
  setNativeRecord(...a: Args<"setNativeRecord">) {
    return map.setNativeRecord(this.db, ...a);
  }
  findRecords(...a: Args<"findRecords">) {
    return map.findRecords(this.db, ...a);
  }
  findDomainsByName(...a: Args<"findDomainsByName">) {
    return map.findDomainsByName(this.db, ...a);
  }
  /** No read cache here, so no change signal: derived caches stay off. */
  readVersion(): number | null {
    return null;
  }
  hasDescendant(...a: Args<"hasDescendant">) {
    return map.hasDescendant(this.db, ...a);
  }
  findDomainsByOwner(...a: Args<"findDomainsByOwner">) {
    return map.findDomainsByOwner(this.db, ...a);
  }
  findDomainsByTld(...a: Args<"findDomainsByTld">) {
    return map.findDomainsByTld(this.db, ...a);
  }
  setReverse(...a: Args<"setReverse">) {
    return map.setReverse(this.db, ...a);
  }
  removeReverse(...a: Args<"removeReverse">) {
    return map.removeReverse(this.db, ...a);
  }
  applyReverses(...a: Args<"applyReverses">) {
    return bulk.applyReverses(this.db, ...a);
  }
  findReverse(...a: Args<"findReverse">) {
    return map.findReverse(this.db, ...a);
  }
  listReverseRecords() {
    return scans.listReverseRecords(this.db);
  }
  findReverseByDomainIds(...a: Args<"findReverseByDomainIds">) {
    return scans.findReverseByDomainIds(this.db, ...a);
  }
  countDomains(...a: Args<"countDomains">) {
    return scans.countDomains(this.db, ...a);
  }
  iterateDomains(...a: Args<"iterateDomains">) {
    return scans.iterateDomains(this.db, ...a);
  }
  iterateDomainsByName(...a: Args<"iterateDomainsByName">) {
    return scans.iterateDomainsByName(this.db, ...a);
  }
  upsertDomains(...a: Args<"upsertDomains">) {
    return bulk.upsertDomains(this.db, ...a);
  }
  findDomainsByTokens(...a: Args<"findDomainsByTokens">) {
    return bulk.findDomainsByTokens(this.db, ...a);
  }
  findDomainIdsByTokens(...a: Args<"findDomainIdsByTokens">) {
    return bulk.findDomainIdsByTokens(this.db, ...a);
  }
  replaceRecordsMany(...a: Args<"replaceRecordsMany">) {
    return bulk.replaceRecordsMany(this.db, ...a);
  }

  // The change log (change-log.port.ts).
  appendChangeEvents(...a: Args<"appendChangeEvents">) {
    return changeLog.appendChangeEvents(this.db, ...a);
  }
  findChangeEventsAfter(...a: Args<"findChangeEventsAfter">) {
    return changeLog.findChangeEventsAfter(this.db, ...a);
  }
  findRetractableChangeEvents(...a: Args<"findRetractableChangeEvents">) {
    return changeLog.findRetractableChangeEvents(this.db, ...a);
  }
  changeLogBounds() {
    return changeLog.changeLogBounds(this.db);
  }
  pruneChangeEvents(...a: Args<"pruneChangeEvents">) {
    return this.inTransaction((db) => changeLog.pruneChangeEvents(db, ...a));
  }

  // The settings changes' winner.changed jobs (settings-winner-jobs.port.ts).
  appendSettingsWinnerJob(...a: Args<"appendSettingsWinnerJob">) {
    return winnerJobs.appendSettingsWinnerJob(this.db, ...a);
  }
  findNextSettingsWinnerJob(...a: Args<"findNextSettingsWinnerJob">) {
    return winnerJobs.findNextSettingsWinnerJob(this.db, ...a);
  }
  failSettingsWinnerJob(...a: Args<"failSettingsWinnerJob">) {
    return winnerJobs.failSettingsWinnerJob(this.db, ...a);
  }
  advanceSettingsWinnerJob(...a: Args<"advanceSettingsWinnerJob">) {
    return winnerJobs.advanceSettingsWinnerJob(this.db, ...a);
  }
  pruneSettingsWinnerJobs(...a: Args<"pruneSettingsWinnerJobs">) {
    return winnerJobs.pruneSettingsWinnerJobs(this.db, ...a);
  }

  // The crawler log (crawler-log.port.ts).
  getCheckpoint(...a: Args<"getCheckpoint">) {
    return crawlerLog.getCheckpoint(this.db, ...a);
  }
  listCheckpoints(...a: Args<"listCheckpoints">) {
    return crawlerLog.listCheckpoints(this.db, ...a);
  }
  setCheckpoint(...a: Args<"setCheckpoint">) {
    return crawlerLog.setCheckpoint(this.db, ...a);
  }
  deleteCheckpoint(...a: Args<"deleteCheckpoint">) {
    return crawlerLog.deleteCheckpoint(this.db, ...a);
  }
  appendJournal(...a: Args<"appendJournal">) {
    return journal.appendJournal(this.db, ...a);
  }
  findJournalByToken(...a: Args<"findJournalByToken">) {
    return journal.findJournalByToken(this.db, ...a);
  }
  findJournalAfter(...a: Args<"findJournalAfter">) {
    return journal.findJournalAfter(this.db, ...a);
  }
  deleteJournalAfter(...a: Args<"deleteJournalAfter">) {
    return journal.deleteJournalAfter(this.db, ...a);
  }
  findJournalByTokens(...a: Args<"findJournalByTokens">) {
    return journal.findJournalByTokens(this.db, ...a);
  }
  findJournalTokensAfter(...a: Args<"findJournalTokensAfter">) {
    return journal.findJournalTokensAfter(this.db, ...a);
  }
  findJournalUpTo(...a: Args<"findJournalUpTo">) {
    return journal.findJournalByTokens(this.db, ...a);
  }
  findJournalKeysMentioning(...a: Args<"findJournalKeysMentioning">) {
    return journalHistory.findJournalKeysMentioning(this.db, ...a);
  }
  findJournalTimeAt(...a: Args<"findJournalTimeAt">) {
    return journalHistory.findJournalTimeAt(this.db, ...a);
  }
  findJournalStart(...a: Args<"findJournalStart">) {
    return journalHistory.findJournalStart(this.db, ...a);
  }
  iterateJournal(...a: Args<"iterateJournal">) {
    return journal.iterateJournal(this.db, ...a);
  }
  acquireSourceLease(...a: Args<"acquireSourceLease">) {
    return crawlerLog.acquireSourceLease(this.db, ...a);
  }
  holdsSourceLease(...a: Args<"holdsSourceLease">) {
    return crawlerLog.holdsSourceLease(this.db, this.dialect, ...a);
  }
  releaseSourceLease(...a: Args<"releaseSourceLease">) {
    return crawlerLog.releaseSourceLease(this.db, ...a);
  }
  listSourceLeases(...a: Args<"listSourceLeases">) {
    return crawlerLog.listSourceLeases(this.db, ...a);
  }
  reportSourceProgress(...a: Args<"reportSourceProgress">) {
    return crawlerLog.reportSourceProgress(this.db, ...a);
  }
  putRecentBlocks(...a: Args<"putRecentBlocks">) {
    return crawlerLog.putRecentBlocks(this.db, ...a);
  }
  findRecentBlocks(...a: Args<"findRecentBlocks">) {
    return crawlerLog.findRecentBlocks(this.db, ...a);
  }
  deleteRecentBlocks(...a: Args<"deleteRecentBlocks">) {
    return crawlerLog.deleteRecentBlocks(this.db, ...a);
  }

  // Projects and API keys (accounts.port.ts).
  createProject(...a: Args<"createProject">) {
    return projects.createProject(this.db, ...a);
  }
  findProjectById(...a: Args<"findProjectById">) {
    return projects.findProjectById(this.db, ...a);
  }
  findProjectByName(...a: Args<"findProjectByName">) {
    return projects.findProjectByName(this.db, ...a);
  }
  updateProjectSettings(...a: Args<"updateProjectSettings">) {
    return projects.updateProjectSettings(this.db, ...a);
  }
  insertApiKey(...a: Args<"insertApiKey">) {
    return projects.insertApiKey(this.db, ...a);
  }
  findApiKeyByHash(...a: Args<"findApiKeyByHash">) {
    return projects.findApiKeyByHash(this.db, ...a);
  }
  listApiKeys(...a: Args<"listApiKeys">) {
    return projects.listApiKeys(this.db, ...a);
  }
  revokeApiKey(...a: Args<"revokeApiKey">) {
    return projects.revokeApiKey(this.db, ...a);
  }
  touchApiKeys(...a: Args<"touchApiKeys">) {
    return projects.touchApiKeys(this.db, ...a);
  }

  // The scoring jobs' data (scoring-data.port.ts).
  listTldFirstRegistrations() {
    return scoring.listTldFirstRegistrations(this.db);
  }
  findSharedNames() {
    return scoring.findSharedNames(this.db);
  }
  findNameHolders(...a: Args<"findNameHolders">) {
    return scoring.findNameHolders(this.db, ...a);
  }
  iterateSharedNames(...a: Args<"iterateSharedNames">) {
    return scoring.iterateSharedNames(this.db, ...a);
  }
  countSharedNames() {
    return scoring.countSharedNames(this.db);
  }
  findNamesWithoutSkeleton(...a: Args<"findNamesWithoutSkeleton">) {
    return scoring.findNamesWithoutSkeleton(this.db, ...a);
  }
  setNameSkeletons(...a: Args<"setNameSkeletons">) {
    return this.inTransaction((db) => scoring.setNameSkeletons(db, ...a));
  }
  findUnscoredNames(...a: Args<"findUnscoredNames">) {
    return rescoreState.findUnscoredNames(this.db, ...a);
  }
  markNamesScored(...a: Args<"markNamesScored">) {
    return rescoreState.markNamesScored(this.db, ...a);
  }
  findScoringState(...a: Args<"findScoringState">) {
    return rescoreState.findScoringState(this.db, ...a);
  }
  setScoringState(...a: Args<"setScoringState">) {
    return rescoreState.setScoringState(this.db, ...a);
  }
  iterateLookalikeGroups(...a: Args<"iterateLookalikeGroups">) {
    return scoring.iterateLookalikeGroups(this.db, ...a);
  }
  findNamesOnPairs(...a: Args<"findNamesOnPairs">) {
    return scoring.findNamesOnPairs(this.db, ...a);
  }
  findRankingCandidates(...a: Args<"findRankingCandidates">) {
    return scoring.findRankingCandidates(this.db, ...a);
  }
  iterateDomainNames(...a: Args<"iterateDomainNames">) {
    return scoring.iterateDomainNames(this.db, ...a);
  }
  findDomainIdsByOwners(...a: Args<"findDomainIdsByOwners">) {
    return scoring.findDomainIdsByOwners(this.db, ...a);
  }
  findKycOwners() {
    return scoring.findKycOwners(this.db);
  }
  importKycAddresses(...a: Args<"importKycAddresses">) {
    return this.inTransaction((db) => scoring.importKycAddresses(db, ...a));
  }
}
