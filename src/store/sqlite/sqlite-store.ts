import { resolve } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { type Kysely, Kysely as KyselyCtor, SqliteDialect } from "kysely";
import type { DomainWithRecords } from "../../domain/types.js";
import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import { cachedDomainMap, DomainReadCache } from "../domain-read-cache.js";
import { kyselyParts } from "../kysely/kysely-parts.js";
import { clearChainIndex, migrate, ping, storeOver } from "../kysely/kysely-lifecycle.js";
import { toApiKey, toJournal } from "../kysely/rows.js";
import type { CrawlerLog, JournalBound, JournalEntry } from "../crawler-log.port.js";
import type { DomainMap } from "../domain-map.port.js";
import { sqliteTransactionStore } from "./sqlite-bulk-writes.js";
import { fromRow, scanDomainsByName } from "./sqlite-name-scan.js";
import { scanDomainsByNameInWorker } from "./sqlite-name-scan-worker.js";
import { openReader, openWriter, READER_MMAP_BYTES, READER_PAGE_CACHE_BYTES } from "./sqlite-open.js";
import { withSqliteSnapshotSink } from "./sqlite-snapshot-import.js";
import type { SnapshotSink } from "../snapshot-sink.port.js";
import {
  commitCounters,
  counterOf,
  FOREIGN_COMMIT_BOUND_MS,
  trackCommits,
  WalIndexProbe,
} from "./sqlite-commit-watch.js";
import type { Database } from "../schema.js";
import type { AccountsDb, ApiKey, ProjectsStore } from "../accounts.port.js";
import type { Store } from "../store.js";
import type { ChangeLog } from "../change-log.port.js";
import type { ScoringData } from "../scoring-data.port.js";
import type { SettingsWinnerJobs } from "../settings-winner-jobs.port.js";
import {
  type ClosableDialect,
  pagesWithStoreErrors,
  storeError,
  unavailableDialect,
  withStoreErrors,
} from "../kysely/unavailable-dialect.js";
import { WalCheckpointer } from "./sqlite-checkpointer.js";
import { isSqliteUnavailable } from "./sqlite-unavailable.js";
import { withStatementCache } from "./sqlite-statement-cache.js";
import { prepareReadStatements, type ReadStatements } from "./sqlite-read-statements.js";

type Row = Record<string, unknown>;

/** SQLite through Kysely (its statements prepared once), its driver's errors read by this backend. */
function sqliteDialect(database: BetterSqlite3.Database) {
  return unavailableDialect(
    new SqliteDialect({ database: withStatementCache(database) }),
    isSqliteUnavailable,
  );
}

/** `fn` on a prepared statement, its errors read as the Kysely path's are. */
function mapped<A extends unknown[], R>(fn: (...a: A) => R): (...a: A) => R {
  return (...a) => {
    try {
      return fn(...a);
    } catch (e) {
      throw storeError(e, isSqliteUnavailable);
    }
  };
}

/**
 * SQLite backend: writes go through Kysely on one connection; the API's hot reads go through
 * prepared statements on a second, read-only connection. Measured here a primary-key lookup costs
 * ~6 µs prepared against ~30 µs through the query builder. The separate connection matters: a
 * reader on the writer's connection would see a crawler transaction's uncommitted rows, while WAL
 * gives the reader the last committed snapshot.
 */
export class SqliteStore implements Store {
  readonly dialect = "sqlite" as const;
  /** The backend's handle: every part's queries run on it. Not part of the port. */
  readonly db: Kysely<Database>;
  readonly domainMap: DomainMap;
  readonly crawlerLog: CrawlerLog;
  readonly changeLog: ChangeLog;
  readonly scoring: ScoringData;
  readonly winnerJobs: SettingsWinnerJobs;
  readonly projects: ProjectsStore;
  readonly accounts: AccountsDb;
  /** The Kysely dialect over the writer connection: `close` ends it (unavailable-dialect.ts). */
  private readonly driver: ClosableDialect;
  private reader: BetterSqlite3.Database | null = null;
  /**
   * The map's read caches (by name, by owner, reverse; domain-read-cache.ts). Exact to the last commit of this process (any SqliteStore on the file):
   * its commits are counted as they happen (`commitCounters`), and a new count empties the cache
   * before the next read is answered. Another process's commits are seen through the WAL index
   * (`probe`; without one, `pragma data_version` on the reader connection), read at most once per
   * FOREIGN_COMMIT_BOUND_MS (foreignCommitBoundMs): their new state is served at most that long
   * after they commit.
   */
  private readonly reads: DomainReadCache;
  private readonly counter: { commits: number; stores: number };
  private seenCommits: number;
  private probedAt = Number.NEGATIVE_INFINITY;
  private probe: WalIndexProbe | null = null;
  private dataVersion = -1;
  private stmts: ReadStatements | null = null;
  private open = true;

  /** The writer connection as Kysely and `raw` see it: its commits are counted. */
  private readonly tracked: BetterSqlite3.Database;

  private constructor(
    private readonly file: string,
    /** The bare writer connection, for statements that run inside a (counted) transaction. */
    private readonly writer: BetterSqlite3.Database,
    private readonly foreignCommitBoundMs: number,
    private readonly readOptions: Pick<
      SqliteStoreOptions,
      "mmapBytes" | "cacheEntries" | "pageCacheBytes" | "checkpointFrames"
    > = {},
  ) {
    const counter = counterOf(file);
    const tracked = trackCommits(writer, {
      write: () => {
        counter.commits++;
        this.checkpointer.committed();
        // Own commits move the WAL index too: absorb them, so that the probe does not empty the
        // cache again for them. A foreign commit absorbed here is no loss: the new count empties
        // the cache before the next read anyway, and that read sees every commit up to now.
        this.absorbForeignCommits();
      },
      // The cache stays; the WAL index moved by exactly this commit is absorbed, anything more
      // is left for the probe to see (see WalIndexProbe.absorbOwnCommit).
      cacheFree: () => {
        this.probe?.absorbOwnCommit();
        this.checkpointer.committed();
      },
    });
    // Its driver's errors that mean the file cannot be used leave the store as STORE_UNAVAILABLE.
    this.driver = sqliteDialect(tracked);
    this.db = new KyselyCtor<Database>({ dialect: this.driver });
    this.reads = new DomainReadCache(readOptions.cacheEntries);
    counter.stores++;
    this.counter = counter;
    this.seenCommits = counter.commits;
    this.tracked = tracked;
    this.checkpointer = new WalCheckpointer(file, writer, { frames: readOptions.checkpointFrames });
    const parts = kyselyParts(this.db, "sqlite");
    this.domainMap = cachedDomainMap(
      {
        ...parts.domainMap,
        iterateDomainsByName: (...a) => this.iterateDomainsByName(parts.domainMap, ...a),
      },
      this.reads,
      {
        fresh: () => {
          if (!this.stmts) return false;
          this.fresh();
          return true;
        },
        load: {
          byName: mapped((name) => (this.stmts!.byName.all(name) as unknown[][]).map(fromRow)),
          byOwner: mapped((address) => (this.stmts!.byOwner.all(address) as unknown[][]).map(fromRow)),
          reverse: mapped((address) =>
            (this.stmts!.reverse.all(address) as Row[]).map((r) => ({
              network: r.network as Network,
              provider: r.provider as Provider,
              address: r.address as string,
              domainId: Number(r.domain_id),
            })),
          ),
        },
      },
    );
    this.crawlerLog = {
      ...parts.crawlerLog,
      findJournalUpTo: (...a) => this.findJournalUpTo(parts.crawlerLog, ...a),
    };
    this.projects = {
      ...parts.projects,
      findApiKeyByHash: (hash) => this.findApiKeyByHash(parts.projects, hash),
    };
    this.changeLog = parts.changeLog;
    this.scoring = parts.scoring;
    this.winnerJobs = parts.winnerJobs;
    this.accounts = parts.accounts;
  }

  /** The WAL's checkpoints, on a thread of their own (sqlite-checkpointer.ts). */
  private readonly checkpointer: WalCheckpointer;

  /** Checkpoints run off the writer's thread so far (tests, diagnostics). */
  get backgroundCheckpoints(): number {
    return this.checkpointer.runs;
  }

  /**
   * The checkpoint thread and the read connection first, the writer last: the last connection to
   * close copies the WAL into the database and deletes it, so a store closed cleanly is one file
   * (unless another process still has it open).
   */
  async close(): Promise<void> {
    this.checkpointer.close();
    this.closeReader();
    await this.driver.close();
    if (this.open && --this.counter.stores === 0) commitCounters.delete(resolve(this.file));
    this.open = false;
  }

  /** Closes the read connection and its WAL-index probe (prepare() opens them again). */
  private closeReader(): void {
    this.probe?.close();
    this.probe = null;
    this.reader?.close();
    this.reader = null;
    this.stmts = null;
  }

  static open(file: string, options: SqliteStoreOptions = {}): SqliteStore {
    return new SqliteStore(
      file,
      openWriter(file),
      options.foreignCommitBoundMs ?? FOREIGN_COMMIT_BOUND_MS,
      options,
    );
  }

  async migrate(): Promise<void> {
    await migrate(this.db, this.dialect);
    this.prepare();
  }

  ping(): Promise<boolean> {
    return ping(this.db);
  }

  clearChainIndex(): Promise<void> {
    return clearChainIndex(this.db);
  }

  /** One transaction; inside it the crawler's bulk writes run as prepared statements on this connection. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(sqliteTransactionStore(trx, this.writer)));
  }

  /** A read transaction on a read-only connection of its own: the writer is never held up. */
  async readSnapshot<T>(fn: (snapshot: Store) => Promise<T>): Promise<T> {
    const conn = new BetterSqlite3(this.file, { readonly: true, fileMustExist: true });
    conn.pragma("busy_timeout = 5000");
    const db = new KyselyCtor<Database>({ dialect: sqliteDialect(conn) });
    try {
      return await db.transaction().execute((trx) => fn(storeOver("sqlite", trx)));
    } finally {
      await db.destroy();
    }
  }

  /** Snapshot import: one transaction, prepared statements (sqlite-snapshot-import.ts). */
  async withSnapshotSink<T>(fn: (sink: SnapshotSink) => Promise<T>): Promise<T> {
    let released = false;
    // Into an empty map the import leaves WAL mode: no other connection may be open.
    this.checkpointer.pause();
    try {
      return await withStoreErrors(isSqliteUnavailable, () =>
        withSqliteSnapshotSink(this.db, this.writer, this.tracked, fn, {
          // Into an empty map the import leaves WAL mode, which no other open connection allows:
          // the read connection and its WAL-index probe are closed (reads go through the writer's
          // connection meanwhile, after the import) and opened again after.
          releaseReaders: () => {
            released = this.stmts !== null;
            this.closeReader();
          },
        }),
      );
    } finally {
      this.checkpointer.resume();
      if (released) this.prepare();
    }
  }

  private prepare(): void {
    if (this.stmts) return;
    // The hot path is random lookups by name: its memory is set in sqlite-open.ts.
    const r = openReader(this.file, this.readOptions);
    this.reader = r;
    this.stmts = prepareReadStatements(r);
    // A first read on the reader connection opens its view of the WAL before the probe relies on it.
    this.stmts.dataVersion.get();
    this.probe = WalIndexProbe.open(this.file, String(this.writer.pragma("journal_mode", { simple: true })));
  }

  /** True when a connection committed since the last call (own commits included). */
  private absorbForeignCommits(): boolean {
    if (this.probe !== null) return this.probe.changed();
    if (this.stmts === null) return true;
    const v = this.stmts.dataVersion.get() as number;
    if (v === this.dataVersion) return false;
    this.dataVersion = v;
    return true;
  }

  /** Drops cached reads after a commit: this process's at once, another's within the bound. */
  private fresh(): void {
    if (this.counter.commits !== this.seenCommits) {
      this.seenCommits = this.counter.commits;
      this.clearCaches();
    }
    const now = performance.now();
    if (now - this.probedAt < this.foreignCommitBoundMs) return;
    this.probedAt = now;
    if (this.absorbForeignCommits()) this.clearCaches();
  }

  private clearCaches(): void {
    this.reads.clear();
  }

  /** Time travel's journal reads, on the reader connection: committed entries only. */
  private async findJournalUpTo(
    base: CrawlerLog,
    sourceId: string,
    tokenIds: string[],
    upTo: JournalBound,
  ): Promise<JournalEntry[]> {
    if (!this.stmts || tokenIds.length > 500) return base.findJournalUpTo(sourceId, tokenIds, upTo);
    const byBlock = "block" in upTo;
    const bound = byBlock ? upTo.block : upTo.time;
    // One token (a name's lookup): an index seek without the JSON list. The token or the list
    // twice: the token index's key and the whole id (sqlite-read-statements.ts).
    const one = tokenIds.length === 1;
    const tokens = one ? tokenIds[0] : JSON.stringify(tokenIds);
    const s = this.stmts;
    const statement = one
      ? byBlock
        ? s.tokenJournalToBlock
        : s.tokenJournalToTime
      : byBlock
        ? s.journalToBlock
        : s.journalToTime;
    const rows = mapped(() => statement.all(sourceId, tokens, tokens, bound))();
    return (rows as Array<Parameters<typeof toJournal>[0]>).map(toJournal);
  }

  /** The zone export's scan: one statement a page on the reader connection (sqlite-name-scan.ts). */
  private async *iterateDomainsByName(
    base: DomainMap,
    pageSize = 1000,
    opts: { recordKeys?: readonly string[]; readAhead?: boolean } = {},
  ): AsyncIterable<DomainWithRecords[]> {
    if (!this.reader) {
      yield* base.iterateDomainsByName(pageSize, opts);
      return;
    }
    if (opts.readAhead && !this.reader.memory)
      yield* pagesWithStoreErrors(
        isSqliteUnavailable,
        scanDomainsByNameInWorker(
          this.file,
          {
            mmapBytes: this.readOptions.mmapBytes ?? READER_MMAP_BYTES,
            pageCacheBytes: this.readOptions.pageCacheBytes ?? READER_PAGE_CACHE_BYTES,
          },
          pageSize,
          opts,
        ),
      );
    else yield* pagesWithStoreErrors(isSqliteUnavailable, scanDomainsByName(this.reader, pageSize, opts));
  }

  private async findApiKeyByHash(base: ProjectsStore, hash: string): Promise<ApiKey | null> {
    if (!this.stmts) return base.findApiKeyByHash(hash);
    const stmts = this.stmts;
    const r = mapped(() => stmts.keyByHash.get(hash))() as Row | undefined;
    if (!r) return null;
    return toApiKey(r as unknown as Parameters<typeof toApiKey>[0]);
  }

  /**
   * The writer connection, for bulk loaders that need better-sqlite3's synchronous speed. Its
   * commits are counted like Kysely's: the read cache stays exact.
   */
  get raw(): BetterSqlite3.Database {
    return this.tracked;
  }
}

export interface SqliteStoreOptions {
  /**
   * How long another process's commit may go unseen by the read cache (default
   * FOREIGN_COMMIT_BOUND_MS). Tests set it high to check this process's own commit tracking alone.
   */
  foreignCommitBoundMs?: number;
  /** The read connection's memory-mapped window (default none: sqlite-open.ts READER_MMAP_BYTES). */
  mmapBytes?: number;
  /** Names the read cache keeps (default CACHE_ENTRIES; 0: none, for a one-pass export). */
  cacheEntries?: number;
  /** The read connection's SQLite page cache (default READER_PAGE_CACHE_BYTES, 64 MiB). */
  pageCacheBytes?: number;
  /** The WAL's length past which commits are checkpointed off the writer's thread (default CHECKPOINT_FRAMES). */
  checkpointFrames?: number;
}

export function createSqliteStore(file: string, options: SqliteStoreOptions = {}): SqliteStore {
  return SqliteStore.open(file, options);
}
