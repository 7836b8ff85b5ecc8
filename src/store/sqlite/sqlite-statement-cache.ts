import type BetterSqlite3 from "better-sqlite3";

/** Distinct SQL texts kept prepared: Kysely's queries are a few dozen shapes; `in (?, …)` lists add more. */
export const STATEMENT_CACHE_ENTRIES = 256;

/**
 * `db` as Kysely's SQLite driver sees it, with `prepare` answered from a cache of the statements
 * already prepared (by SQL text, least recently used dropped first). Kysely prepares every query
 * it runs again, each time: an idle crawler's few commits a second made that a visible part of
 * its CPU. Safe for Kysely's use only: it runs a statement (`all`, `run`, `iterate`) and never
 * changes its modes (`pluck`, `raw`, `bind`), which a shared statement would carry to the next
 * caller. A statement still busy (an `iterate` not finished) is not handed out twice: a fresh
 * one is prepared for that call.
 */
export function withStatementCache(
  db: BetterSqlite3.Database,
  entries = STATEMENT_CACHE_ENTRIES,
): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = (sql: string): BetterSqlite3.Statement => {
    const hit = cache.get(sql);
    if (hit !== undefined && !hit.busy) {
      cache.delete(sql);
      cache.set(sql, hit);
      return hit;
    }
    const stmt = db.prepare(sql);
    if (hit === undefined) {
      cache.set(sql, stmt);
      if (cache.size > entries) cache.delete(cache.keys().next().value as string);
    }
    return stmt;
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return prepare;
      if (prop === "close") {
        return () => {
          cache.clear();
          return target.close();
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
