import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";

/** The writer connection of a SQLite store: WAL, synchronous NORMAL, foreign keys, a 5 s busy timeout. */
export function openWriter(file: string): BetterSqlite3.Database {
  mkdirSync(dirname(file), { recursive: true });
  const db = new BetterSqlite3(file);
  // The busy timeout first: processes opening a new file together wait for each other's switch
  // to WAL instead of failing with SQLITE_BUSY.
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  return db;
}

/**
 * The read connection's memory: no memory-mapped window and a 64 MiB page cache. Pages of a mmap
 * window that a read touched stay in the process's RSS (the kernel keeps clean file pages mapped
 * while memory is free): a 1 GiB window held the API role at 946 MB after 200,000 resolves over
 * 1,000,000 domains (bench/HISTORY.md, "Scale"), and at 10,000,000 domains (~30 GB) such a window
 * covers 3 % of the file anyway. Without it a page missed by the cache is one pread from the OS's
 * page cache (a few microseconds, against 350-720 µs for a cold resolve), and the connection's
 * memory is the page cache: bounded.
 */
export const READER_MMAP_BYTES = 0;
export const READER_PAGE_CACHE_BYTES = 64 << 20;

/** A read-only connection to a store's file, with its read window and page cache (default above). */
export function openReader(
  file: string,
  opts: { mmapBytes?: number; pageCacheBytes?: number } = {},
): BetterSqlite3.Database {
  const r = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  r.pragma("busy_timeout = 5000");
  r.pragma(`mmap_size = ${Math.max(0, Math.floor(opts.mmapBytes ?? READER_MMAP_BYTES))}`);
  r.pragma(
    `cache_size = -${Math.max(0, Math.floor((opts.pageCacheBytes ?? READER_PAGE_CACHE_BYTES) / 1024))}`,
  );
  return r;
}

/**
 * `build` run once per connection, its result kept while the connection lives (prepared
 * statements: a statement belongs to the connection that prepared it).
 *
 * @example
 * const statementsOf = perConnection((db) => ({ count: db.prepare("select count(*) from domains") }));
 */
export function perConnection<T>(
  build: (db: BetterSqlite3.Database) => T,
): (db: BetterSqlite3.Database) => T {
  const kept = new WeakMap<BetterSqlite3.Database, T>();
  return (db) => {
    let value = kept.get(db);
    if (value === undefined) {
      value = build(db);
      kept.set(db, value);
    }
    return value;
  };
}
