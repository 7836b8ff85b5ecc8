import { type Kysely, Kysely as KyselyCtor, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { AccountsDb, ProjectsStore } from "../accounts.port.js";
import { CHANNEL_DOWN_TTL_MS, type ChangeFeed } from "../change-feed.port.js";
import type { ChangeLog } from "../change-log.port.js";
import type { CrawlerLog } from "../crawler-log.port.js";
import type { DomainMap } from "../domain-map.port.js";
import { cachedDomainMap, DomainReadCache } from "../domain-read-cache.js";
import { kyselyParts } from "../kysely/kysely-parts.js";
import { clearChainIndex, migrate, ping, storeOver } from "../kysely/kysely-lifecycle.js";
import * as bulk from "../kysely/domain-map-bulk.queries.js";
import type { ScoringData } from "../scoring-data.port.js";
import type { Database } from "../schema.js";
import type { SettingsWinnerJobs } from "../settings-winner-jobs.port.js";
import type { Store, StoreParts } from "../store.js";
import {
  type ClosableDialect,
  pagesWithStoreErrors,
  unavailableDialect,
  withStoreErrors,
} from "../kysely/unavailable-dialect.js";
import { CHANNEL, PgChangeFeed } from "./pg-change-feed.js";
import { isPgUnavailable } from "./pg-unavailable.js";
import { TableStatistics } from "./pg-table-statistics.js";
import { PgSourceLocks } from "./pg-source-locks.js";
import { scanDomainsByNamePg } from "./pg-name-scan.js";
import { withPgSnapshotSink } from "./pg-snapshot-import.js";
import type { SnapshotSink } from "../snapshot-sink.port.js";

// int8 (bigint, bigserial) and numeric come back from pg as strings by default. Every bigint in
// this schema is an epoch-ms time, a block number or an id: all below 2^53, so numbers are safe.
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** The domain map's writes (what resolution reads): each publishes `map` once it has returned. */
const MAP_WRITES = [
  "upsertDomain",
  "deleteDomain",
  "updateDomainSignals",
  "updateDomainSignalsMany",
  "replaceRecords",
  "setNativeRecord",
  "setReverse",
  "removeReverse",
  "applyReverses",
  "upsertDomains",
  "replaceRecordsMany",
] as const;

type AnyFn = (...a: unknown[]) => Promise<unknown>;

/** `fn`, running `after` once it has returned. */
function then<F>(fn: F, after: () => Promise<void>): F {
  return (async (...a: unknown[]) => {
    const r = await (fn as AnyFn)(...a);
    await after();
    return r;
  }) as F;
}

/**
 * The parts with `after` run once each write that changes the domain map has returned (the map's
 * writes and the KYC import, which sets the map's `kyc` signal).
 */
function tapMapWrites(parts: StoreParts, after: () => Promise<void>): StoreParts {
  const domainMap: Record<string, unknown> = { ...parts.domainMap };
  for (const m of MAP_WRITES) domainMap[m] = then(parts.domainMap[m], after);
  return {
    ...parts,
    domainMap: domainMap as unknown as DomainMap,
    scoring: { ...parts.scoring, importKycAddresses: then(parts.scoring.importKycAddresses, after) },
  };
}

function notify(db: Kysely<Database>, topic: string): Promise<unknown> {
  return sql`select pg_notify(${CHANNEL}, ${topic})`.execute(db);
}

/** `feed` inside a transaction: its `publish` NOTIFYs on the transaction (sent on commit, never on rollback). */
function transactionalFeed(feed: ChangeFeed, trx: Kysely<Database>): ChangeFeed {
  return {
    get up() {
      return feed.up;
    },
    on: (listener) => feed.on(listener),
    publish: async (topic) => {
      await notify(trx, topic);
    },
  };
}

/**
 * The parts over an open PostgreSQL transaction, knowing which domains the transaction inserted
 * and has not written records for yet (as SQLite's transaction store does): a backfill's record
 * writes then skip the delete of records that cannot exist.
 */
function transactionParts(trx: Kysely<Database>): StoreParts {
  const base = kyselyParts(trx, "postgres");
  const recordless = new Set<number>();
  return {
    ...base,
    domainMap: {
      ...base.domainMap,
      upsertDomains: (domains) => bulk.upsertDomains(trx, domains, recordless),
      replaceRecordsMany: (items) => bulk.replaceRecordsMany(trx, items, recordless),
      replaceRecords: (domainId, records) => {
        recordless.delete(domainId);
        return base.domainMap.replaceRecords(domainId, records);
      },
      setNativeRecord: (...a) => {
        recordless.delete(a[0]);
        return base.domainMap.setNativeRecord(...a);
      },
    },
  };
}

/**
 * PostgreSQL backend: the shared Kysely parts over a pg pool, with the domain map's exact read
 * caches (domain-read-cache.ts, as on SQLite). They are emptied by this process's map commits at
 * once, and by every process's through the change channel (`map` on LISTEN/NOTIFY, published in
 * the writing transaction, so delivered on commit). While the channel is down the caches answer at
 * most CHANNEL_DOWN_TTL_MS after filling: bounded staleness, reported by /readyz.
 */
export class PostgresStore implements Store {
  readonly dialect = "postgres" as const;
  /** The backend's handle: every part's queries run on it. Not part of the port. */
  readonly db: Kysely<Database>;
  readonly domainMap: DomainMap;
  readonly crawlerLog: CrawlerLog;
  readonly changeLog: ChangeLog;
  readonly scoring: ScoringData;
  readonly winnerJobs: SettingsWinnerJobs;
  readonly projects: ProjectsStore;
  readonly accounts: AccountsDb;
  /** The Kysely dialect over the pool: `close` ends the pool (unavailable-dialect.ts). */
  private readonly driver: ClosableDialect;
  private readonly reads = new DomainReadCache();
  private clearedAt = performance.now();
  readonly changes: PgChangeFeed;
  /** The crawler's per-source advisory locks, on their own connection (opened on first use). */
  readonly sourceLocks: PgSourceLocks;
  private started = false;
  private readonly pool: pg.Pool;
  /** The crawled tables' planner statistics, taken again as a backfill doubles them. */
  readonly statistics: TableStatistics;

  constructor(url: string, poolSize: number) {
    const pool = new pg.Pool({ connectionString: url, max: poolSize, types: types as pg.CustomTypesConfig });
    // A connection's error must never crash the process; the query it cut (or the next one)
    // reports it. The pool listens on idle clients only ("error" below): a client checked out
    // between two queries (inside a transaction, or being handed back) emits its error on
    // itself, and an 'error' event with no listener is thrown (pg_terminate_backend, a restart).
    pool.on("error", () => {});
    pool.on("connect", (client) => {
      client.on("error", () => {});
    });
    // Its driver's errors that mean PostgreSQL is away leave the store as STORE_UNAVAILABLE.
    this.driver = unavailableDialect(new PostgresDialect({ pool }), isPgUnavailable);
    this.db = new KyselyCtor<Database>({ dialect: this.driver });
    this.statistics = new TableStatistics(this.db);
    this.pool = pool;
    this.sourceLocks = new PgSourceLocks(url);
    this.changes = new PgChangeFeed(url, async (topic) => {
      await notify(this.db, topic);
    });
    this.changes.on((topic) => {
      if (topic === "map" || topic === "*") this.clearCaches();
    });
    const parts = tapMapWrites(kyselyParts(this.db, "postgres"), async () => {
      await notify(this.db, "map");
      this.clearCaches();
    });
    this.domainMap = cachedDomainMap(
      {
        ...parts.domainMap,
        iterateDomainsByName: (pageSize = 1000, opts = {}) =>
          pagesWithStoreErrors(isPgUnavailable, scanDomainsByNamePg(this.pool, pageSize, opts)),
      },
      this.reads,
      {
        fresh: () => {
          this.fresh();
          return true;
        },
      },
    );
    this.crawlerLog = parts.crawlerLog;
    this.changeLog = parts.changeLog;
    this.scoring = parts.scoring;
    this.winnerJobs = parts.winnerJobs;
    this.projects = parts.projects;
    this.accounts = parts.accounts;
  }

  /** Closes once a statistics check under way has ended (it runs on the pool). */
  async close(): Promise<void> {
    await this.statistics.idle();
    await this.driver.close();
    await this.changes.close();
    await this.sourceLocks.close();
  }

  async migrate(): Promise<void> {
    await migrate(this.db, this.dialect);
    if (!this.started) {
      this.started = true;
      await this.changes.start();
    }
  }

  ping(): Promise<boolean> {
    return ping(this.db);
  }

  async clearChainIndex(): Promise<void> {
    await clearChainIndex(this.db);
    await notify(this.db, "map");
    this.clearCaches();
  }

  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    const feed = this.changes;
    let wroteMap = false;
    const result = await this.db.transaction().execute((trx) => {
      // NOTIFY inside the transaction: the other processes hear of it when (and only if) it commits.
      const parts = tapMapWrites(transactionParts(trx), async () => {
        if (wroteMap) return;
        wroteMap = true;
        await notify(trx, "map");
      });
      const tx = storeOver("postgres", trx, parts);
      // The change feed as seen inside the transaction: `publish` is a NOTIFY on the transaction's
      // own connection, delivered to every process when (and only if) it commits.
      return fn({
        ...tx,
        changes: transactionalFeed(feed, trx),
        clearChainIndex: then(tx.clearChainIndex, async () => {
          if (wroteMap) return;
          wroteMap = true;
          await notify(trx, "map");
        }),
      });
    });
    if (wroteMap) {
      this.clearCaches();
      this.statistics.afterWrite();
    }
    return result;
  }

  /** Snapshot import: COPY into staging tables, set-based upserts, one transaction (pg-snapshot-import.ts). */
  async withSnapshotSink<T>(fn: (sink: SnapshotSink) => Promise<T>): Promise<T> {
    const result = await withStoreErrors(isPgUnavailable, () => withPgSnapshotSink(this.pool, fn));
    this.clearCaches();
    return result;
  }

  /**
   * One repeatable-read transaction, with the snapshot exported: the snapshot store's
   * `iterateDomainsByName` streams its COPY on another connection of the pool, on the same
   * snapshot (the XFR zones' read: the ranking asks the transaction for names meanwhile).
   */
  readSnapshot<T>(fn: (snapshot: Store) => Promise<T>): Promise<T> {
    return this.db
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute(async (trx) => {
        const snap = storeOver(this.dialect, trx);
        const { rows } = await sql<{ id: string }>`select pg_export_snapshot() as id`.execute(trx);
        const id = rows[0].id;
        return fn({
          ...snap,
          domainMap: {
            ...snap.domainMap,
            iterateDomainsByName: (pageSize = 1000, opts: { recordKeys?: readonly string[] } = {}) =>
              pagesWithStoreErrors(isPgUnavailable, scanDomainsByNamePg(this.pool, pageSize, opts, id)),
          },
        });
      });
  }

  private clearCaches(): void {
    this.reads.clear();
    this.clearedAt = performance.now();
  }

  /** Without the channel, another process's commit is seen at most CHANNEL_DOWN_TTL_MS late. */
  private fresh(): void {
    if (!this.changes.up && performance.now() - this.clearedAt >= CHANNEL_DOWN_TTL_MS) this.clearCaches();
  }
}

/** PostgreSQL backend: the shared Kysely parts over a pg pool, with the change channel. */
export function createPostgresStore(url: string, poolSize = 10): PostgresStore {
  return new PostgresStore(url, poolSize);
}
