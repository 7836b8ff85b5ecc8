import { closeSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";

/**
 * How the SQLite store's read cache learns of commits (sqlite-store.ts): this process's commits
 * as they happen, through its writer connection (`trackCommits`, `counterOf`), and other
 * processes' through the WAL index (`WalIndexProbe`).
 */

/** The first copy of the WAL-index header: 48 bytes at the start of the `-shm` file. */
const WAL_INDEX_HEADER = 48;
/** iVersion of the WAL-index header (https://www.sqlite.org/walformat.html). */
const WAL_INDEX_VERSION = 3007000;

/**
 * Tells, exactly, whether any connection committed to the database since the last call: this
 * process's writer, another store on the same file, or a crawler process.
 *
 * It reads the first copy of the WAL-index header from the `-shm` file (walformat.html, "The
 * WAL-Index Header"). SQLite makes a commit visible to readers precisely by rewriting that header,
 * and every commit changes it (mxFrame grows; when the WAL restarts, the salts and iChange change),
 * so bytes equal to the last ones read mean that no commit happened in between. A header read in
 * the middle of a write differs from the last one seen, which only costs one needless invalidation.
 * `pragma data_version` answers the same question, but it begins and ends a read transaction (shm
 * locks): ~2 µs in a loop against ~1 µs for this read. Under load either one costs far more per
 * request (~8 µs of server time measured here: a system call, and the CPU caches it leaves cold),
 * which is why the store asks at most once per FOREIGN_COMMIT_BOUND_MS.
 *
 * The `-shm` file stays the same file while the store is open: SQLite deletes it only when the
 * last connection to the database closes, and the store's own connections are open until
 * close(). `open` returns null (the caller falls back to `pragma data_version`) when the database
 * is not in WAL mode or the header does not look like one.
 */
export class WalIndexProbe {
  private readonly last = Buffer.alloc(WAL_INDEX_HEADER);
  private readonly current = Buffer.alloc(WAL_INDEX_HEADER);

  private constructor(private fd: number | null) {}

  static open(dbFile: string, journalMode: string): WalIndexProbe | null {
    if (journalMode.toLowerCase() !== "wal") return null;
    let fd: number;
    try {
      fd = openSync(`${dbFile}-shm`, "r");
    } catch {
      return null;
    }
    const probe = new WalIndexProbe(fd);
    const h = probe.current;
    const n = readSync(fd, h, 0, WAL_INDEX_HEADER, 0);
    // The header is in the host's byte order; isInit (byte 12) is 1 once a connection built it.
    const version = endianness() === "LE" ? h.readUInt32LE(0) : h.readUInt32BE(0);
    if (n !== WAL_INDEX_HEADER || version !== WAL_INDEX_VERSION || h[12] !== 1) {
      probe.close();
      return null;
    }
    return probe;
  }

  /**
   * Called right after a commit of this process that left the cached data alone: takes the new
   * header as seen when exactly one commit (that one) happened since the last header seen, which
   * iChange (bytes 8..11, +1 per commit) tells. With any other commit in between, or when this one
   * wrote nothing (it changed rows, so it did), the header stays unseen and changed() reports it.
   */
  absorbOwnCommit(): void {
    if (this.fd === null) return;
    const n = readSync(this.fd, this.current, 0, WAL_INDEX_HEADER, 0);
    const le = endianness() === "LE";
    const before = le ? this.last.readUInt32LE(8) : this.last.readUInt32BE(8);
    const now = le ? this.current.readUInt32LE(8) : this.current.readUInt32BE(8);
    if (n === WAL_INDEX_HEADER && now === (before + 1) >>> 0) this.current.copy(this.last);
  }

  /** True when the header changed since the last call (and on the first call). */
  changed(): boolean {
    if (this.fd === null) return true;
    const n = readSync(this.fd, this.current, 0, WAL_INDEX_HEADER, 0);
    if (n === WAL_INDEX_HEADER && this.current.equals(this.last)) return false;
    this.current.copy(this.last);
    return true;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * How long after another process's commit this process may still answer from its cache: the
 * WAL index is read at most once per this many milliseconds. Under load a read per request costs
 * ~8 µs of server time here (a system call, and the caches it leaves cold), a fifth of a request.
 */
export const FOREIGN_COMMIT_BOUND_MS = 1;

/**
 * Commits of this process per database file: every SqliteStore on the file bumps it after each
 * commit of its writer connection, and every one empties its cache on the next read when it
 * changed. Exact, and free on the read path (one comparison).
 */
export const commitCounters = new Map<string, { commits: number; stores: number }>();

export function counterOf(file: string): { commits: number; stores: number } {
  const key = resolve(file);
  let c = commitCounters.get(key);
  if (c === undefined) {
    c = { commits: 0, stores: 0 };
    commitCounters.set(key, c);
  }
  return c;
}

/**
 * Tables that no cached read depends on (the read cache holds domains and their records): a
 * commit that changed rows of these only (usage counters, API keys, accounts) keeps the cache.
 * The crawler's progress (checkpoints, recent block hashes, source leases) is among them: under
 * `npm start` each devnet chain commits an empty range a second, which emptied the read caches
 * and every answer cache keyed on the map's read version (v1-answer-cache.ts, the DNS answer
 * cache) that often. No answer reads them (the DNS serial comes from the shared serial, not from
 * the read version); the journal and change log stay out: the change hub polls the read version
 * for new change events (change-hub.ts).
 */
const CACHE_FREE_TABLES = new Set([
  "checkpoints",
  "crawler_blocks",
  "source_leases",
  "usage_counters",
  "api_key_usage",
  "api_keys",
  "projects",
  "accounts",
  "sessions",
  "account_tokens",
  "memberships",
  "project_access",
  "account_totp",
  "account_recovery_codes",
  "project_two_factor",
  "usage_alerts",
]);

const CONTROL_SQL = /^\s*(begin|commit|end|rollback|savepoint|release)\b/i;
const ROLLBACK_SQL = /^\s*rollback\b/i;
const READ_ONLY_SQL = /^\s*select\b/i;
const DML_TARGET =
  /^\s*(?:(?:insert|replace)\s+(?:or\s+\w+\s+)?into|update\s+(?:or\s+\w+\s+)?|delete\s+from)\s*"?(\w+)"?[\s(]/i;

/** What a statement run through the writer can do to the cached data. */
type StatementKind = "control" | "read" | "cache-free" | "write";

function kindOf(sql: string, reader: boolean): StatementKind {
  if (CONTROL_SQL.test(sql)) return "control";
  if (reader && READ_ONLY_SQL.test(sql)) return "read";
  const target = DML_TARGET.exec(sql)?.[1];
  return target !== undefined && CACHE_FREE_TABLES.has(target.toLowerCase()) ? "cache-free" : "write";
}

/**
 * The writer connection, reporting each commit once it is done (at once outside a transaction, at
 * COMMIT inside one): `write` for a commit that may have changed cached data, `cacheFree` for one
 * that certainly changed rows of CACHE_FREE_TABLES only. It sees Kysely's queries and direct use
 * through `SqliteStore.raw`. Statements prepared on the bare connection and run inside a
 * transaction (the crawler's bulk writes) are not seen one by one: SQLite's total_changes() at
 * BEGIN and COMMIT tells whether anything besides the seen cache-free rows changed, and then the
 * commit counts as a write. Anything it cannot classify counts as a write.
 */
export function trackCommits(
  db: BetterSqlite3.Database,
  on: { write(): void; cacheFree(): void },
): BetterSqlite3.Database {
  const totalChanges = db.prepare("select total_changes()").pluck();
  let tx: { changesAtBegin: number; cacheFreeChanges: number; wrote: boolean } | null = null;
  // `wasIn`: a transaction was open before the statement ran.
  const after = <T>(result: T, kind: StatementKind, sql: string, changes: number, wasIn: boolean): T => {
    if (tx === null && db.inTransaction) {
      // This BEGIN opened it: count from here. Opened by any other statement, or by something
      // not seen here (changes before now unknown): the transaction counts as a write.
      const begun = kind === "control" && !wasIn;
      tx = { changesAtBegin: totalChanges.get() as number, cacheFreeChanges: 0, wrote: !begun };
      return result;
    }
    if (tx !== null) {
      if (kind === "write") tx.wrote = true;
      else if (kind === "cache-free") tx.cacheFreeChanges += changes;
      if (db.inTransaction) return result;
      const t = tx;
      tx = null;
      if (kind === "control" && ROLLBACK_SQL.test(sql)) return result;
      const others = (totalChanges.get() as number) - t.changesAtBegin - t.cacheFreeChanges;
      if (t.wrote || others !== 0) on.write();
      else if (t.cacheFreeChanges > 0) on.cacheFree();
      return result;
    }
    if (kind === "write") on.write();
    else if (kind === "cache-free" && changes > 0) on.cacheFree();
    return result;
  };
  // Wraps an object's methods: those in `ran` report after they return (with the rows changed),
  // those that return the object itself (chaining: pluck(), bind(), …) return the wrapper.
  const wrap = <T extends object>(target: T, kind: StatementKind, sql: string, ran: readonly string[]): T => {
    const methods = new Map<PropertyKey, unknown>();
    const proxy: T = new Proxy(target, {
      get(t, prop) {
        const v = Reflect.get(t, prop, t);
        if (typeof v !== "function") return v;
        let m = methods.get(prop);
        if (m === undefined) {
          const f = v as (...a: unknown[]) => unknown;
          m = !ran.includes(prop as string)
            ? (...a: unknown[]) => {
                const r = f.apply(t, a);
                return r === t ? proxy : r;
              }
            : prop === "iterate"
              ? (...a: unknown[]) =>
                  tracked(f.apply(t, a) as Iterable<unknown>, kind === "read" ? "read" : "write", sql)
              : (...a: unknown[]) => {
                  const wasIn = db.inTransaction;
                  const r = f.apply(t, a);
                  return after(r, kind, sql, changesOf(prop, r), wasIn);
                };
          methods.set(prop, m);
        }
        return m;
      },
    });
    return proxy;
  };
  function* tracked(rows: Iterable<unknown>, kind: StatementKind, sql: string): Generator<unknown> {
    try {
      yield* rows;
    } finally {
      after(undefined, kind, sql, 0, true);
    }
  }
  const database = wrap(db, "write", "", ["exec", "pragma"]);
  return new Proxy(database, {
    get(t, prop) {
      if (prop === "prepare") {
        return (sql: string) => {
          const stmt = db.prepare(sql);
          return wrap(stmt, kindOf(sql, stmt.reader), sql, ["run", "get", "all", "iterate"]);
        };
      }
      if (prop === "transaction") {
        return (fn: (...a: unknown[]) => unknown) => {
          const transaction = db.transaction(fn);
          const done = (f: (...a: unknown[]) => unknown) =>
            function (this: unknown, ...a: unknown[]) {
              return after(f.apply(this, a), "write", "", 0, true);
            };
          return Object.assign(done(transaction), {
            deferred: done(transaction.deferred),
            immediate: done(transaction.immediate),
            exclusive: done(transaction.exclusive),
          });
        };
      }
      return Reflect.get(t, prop);
    },
  });
}

/** Rows a statement changed: run() reports them; RETURNING rows stand for them with all()/get(). */
function changesOf(method: PropertyKey, result: unknown): number {
  if (method === "run") return (result as { changes: number }).changes;
  if (method === "all") return (result as unknown[]).length;
  return result === undefined ? 0 : 1;
}
