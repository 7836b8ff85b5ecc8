import { type Kysely, Kysely as KyselyCtor, PostgresDialect, sql, type Transaction } from "kysely";
import pg from "pg";
import {
  type DomainFilter,
  type DomainWithRecords,
  matchesFilter,
  type ReverseRecord,
} from "../../domain/types.js";
import { CHANNEL_DOWN_TTL_MS, type ChangeFeed } from "../change-feed.port.js";
import {
  DomainReadCache,
  frozenEntry,
  frozenReverse,
  joinEntries,
  type NameEntry,
  narrowed,
} from "../domain-read-cache.js";
import { KyselyStore } from "../kysely-store.js";
import * as bulk from "../kysely/domain-map-bulk.queries.js";
import type { DomainRecord, DomainWrite } from "../../domain/types.js";
import type { Database } from "../schema.js";
import type { Store } from "../store.js";
import { CHANNEL, PgChangeFeed } from "./pg-change-feed.js";
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

/** The port's methods that change the domain map (what resolution reads): each publishes `map`. */
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
  "clearChainIndex",
  "importKycAddresses",
] as const;

type AnyFn = (...a: unknown[]) => Promise<unknown>;

/** Runs `after` once each of `store`'s map writes has returned. */
function tapMapWrites(store: KyselyStore, after: (db: Kysely<Database>) => Promise<void>): void {
  const self = store as unknown as Record<string, AnyFn>;
  for (const m of MAP_WRITES) {
    const write = self[m].bind(store);
    self[m] = async (...a: unknown[]) => {
      const r = await write(...a);
      await after(store.db);
      return r;
    };
  }
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
 * The store over an open PostgreSQL transaction: the Kysely store, knowing which domains the
 * transaction inserted and has not written records for yet (as SQLite's transaction store does):
 * a backfill's record writes then skip the delete of records that cannot exist.
 */
class PgTransactionStore extends KyselyStore {
  private readonly recordless = new Set<number>();

  constructor(trx: Kysely<Database>) {
    super("postgres", trx);
  }

  override upsertDomains(domains: DomainWrite[]): Promise<number[]> {
    return bulk.upsertDomains(this.db, domains, this.recordless);
  }

  override replaceRecordsMany(items: Array<{ domainId: number; records: DomainRecord[] }>): Promise<void> {
    return bulk.replaceRecordsMany(this.db, items, this.recordless);
  }

  override replaceRecords(domainId: number, records: DomainRecord[]): Promise<void> {
    this.recordless.delete(domainId);
    return super.replaceRecords(domainId, records);
  }

  override setNativeRecord(...a: Parameters<KyselyStore["setNativeRecord"]>): Promise<void> {
    this.recordless.delete(a[0]);
    return super.setNativeRecord(...a);
  }
}

/**
 * PostgreSQL backend: the shared Kysely implementation over a pg pool, with the domain map's exact
 * read caches (domain-read-cache.ts, as on SQLite). They are emptied by this process's map commits
 * at once, and by every process's through the change channel (`map` on LISTEN/NOTIFY, published in
 * the writing transaction, so delivered on commit). While the channel is down the caches answer at
 * most CHANNEL_DOWN_TTL_MS after filling: bounded staleness, reported by /readyz.
 */
export class PostgresStore extends KyselyStore {
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
    let feed: PgChangeFeed | null = null;
    let locks: PgSourceLocks | null = null;
    super("postgres", new KyselyCtor<Database>({ dialect: new PostgresDialect({ pool }) }), async () => {
      await feed?.close();
      await locks?.close();
    });
    this.statistics = new TableStatistics(this.db);
    this.pool = pool;
    locks = new PgSourceLocks(url);
    this.sourceLocks = locks;
    feed = new PgChangeFeed(url, async (topic) => {
      await notify(this.db, topic);
    });
    this.changes = feed;
    feed.on((topic) => {
      if (topic === "map" || topic === "*") this.clearCaches();
    });
    tapMapWrites(this, async (db) => {
      await notify(db, "map");
      this.clearCaches();
    });
  }

  /** Closes once a statistics check under way has ended (it runs on the pool). */
  override async close(): Promise<void> {
    await this.statistics.idle();
    await super.close();
  }

  override async migrate(): Promise<void> {
    await super.migrate();
    if (!this.started) {
      this.started = true;
      await this.changes.start();
    }
  }

  override async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if ((this.db as Transaction<Database>).isTransaction) return fn(this);
    const feed = this.changes;
    let wroteMap = false;
    const result = await this.db.transaction().execute((trx) => {
      const tx = new PgTransactionStore(trx);
      // The change feed as seen inside the transaction: `publish` is a NOTIFY on the transaction's
      // own connection, delivered to every process when (and only if) it commits.
      Object.defineProperty(tx, "changes", { value: transactionalFeed(feed, trx) });
      // NOTIFY inside the transaction: the other processes hear of it when (and only if) it commits.
      tapMapWrites(tx, async (db) => {
        if (wroteMap) return;
        wroteMap = true;
        await notify(db, "map");
      });
      return fn(tx);
    });
    if (wroteMap) {
      this.clearCaches();
      this.statistics.afterWrite();
    }
    return result;
  }

  /** Snapshot import: COPY into staging tables, set-based upserts, one transaction (pg-snapshot-import.ts). */
  async withSnapshotSink<T>(fn: (sink: SnapshotSink) => Promise<T>): Promise<T> {
    const result = await withPgSnapshotSink(this.pool, fn);
    this.clearCaches();
    return result;
  }

  /**
   * As KyselyStore's (one repeatable-read transaction), with the snapshot exported: the snapshot
   * store's `iterateDomainsByName` streams its COPY on another connection of the pool, on the same
   * snapshot (the XFR zones' read: the ranking asks the transaction for names meanwhile).
   */
  override readSnapshot<T>(fn: (snapshot: Store) => Promise<T>): Promise<T> {
    if ((this.db as Transaction<Database>).isTransaction) return fn(this);
    return this.db
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute(async (trx) => {
        const snap = new KyselyStore(this.dialect, trx);
        const { rows } = await sql<{ id: string }>`select pg_export_snapshot() as id`.execute(trx);
        const id = rows[0].id;
        Object.defineProperty(snap, "iterateDomainsByName", {
          value: (pageSize = 1000, opts: { recordKeys?: readonly string[] } = {}) =>
            scanDomainsByNamePg(this.pool, pageSize, opts, id),
        });
        return fn(snap);
      });
  }

  /** The zone export's scan: the whole map in one COPY, cut into pages here (pg-name-scan.ts). */
  override iterateDomainsByName(
    pageSize = 1000,
    opts: { recordKeys?: readonly string[]; readAhead?: boolean } = {},
  ): AsyncIterable<DomainWithRecords[]> {
    return scanDomainsByNamePg(this.pool, pageSize, opts);
  }

  private clearCaches(): void {
    this.reads.clear();
    this.clearedAt = performance.now();
  }

  /** Without the channel, another process's commit is seen at most CHANNEL_DOWN_TTL_MS late. */
  private fresh(): void {
    if (!this.changes.up && performance.now() - this.clearedAt >= CHANNEL_DOWN_TTL_MS) this.clearCaches();
  }

  private entry(name: string): Promise<NameEntry> {
    return this.reads.rememberAsync(this.reads.byName, name, async () =>
      frozenEntry(await super.findDomainsByName([name], {})),
    );
  }

  override readVersion(): number | null {
    this.fresh();
    return this.reads.version;
  }

  /** As on SQLite: one name's answer is the cached (frozen) array itself until the next map commit. */
  override async findDomainsByName(names: string[], filter: DomainFilter): Promise<DomainWithRecords[]> {
    this.fresh();
    if (names.length === 1) return narrowed(await this.entry(names[0]), filter) as DomainWithRecords[];
    const entries = await Promise.all([...new Set(names)].map((n) => this.entry(n)));
    return joinEntries(entries, filter);
  }

  override async findDomainsByOwner(address: string, filter: DomainFilter): Promise<DomainWithRecords[]> {
    this.fresh();
    const hit = await this.reads.rememberAsync(this.reads.byOwner, address, async () =>
      frozenEntry(await super.findDomainsByOwner(address, {})),
    );
    return narrowed(hit, filter) as DomainWithRecords[];
  }

  override async findReverse(address: string, filter: DomainFilter): Promise<ReverseRecord[]> {
    this.fresh();
    const all = await this.reads.rememberAsync(this.reads.reverseBy, address, async () =>
      frozenReverse(await super.findReverse(address, {})),
    );
    if (!filter.network && !filter.provider) return all as ReverseRecord[];
    return all.filter((r) => matchesFilter(r, filter));
  }
}

/** PostgreSQL backend: the shared Kysely implementation over a pg pool, with the change channel. */
export function createPostgresStore(url: string, poolSize = 10): PostgresStore {
  return new PostgresStore(url, poolSize);
}
