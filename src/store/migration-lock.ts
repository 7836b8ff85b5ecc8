import { type Kysely, sql } from "kysely";
import { driverError } from "./kysely/unavailable-dialect.js";
import type { Dialect } from "./store.js";

/** The table that records which migrations ran. */
export interface MigrationsTable {
  omniname_migrations: { name: string; applied_at: number };
}

/**
 * The advisory lock that serializes migrations on PostgreSQL, in the two-int key space (which does
 * not overlap the single bigint keys of the crawler's source locks): "omni" and 1.
 */
const PG_MIGRATION_LOCK = [0x6f6d6e69, 1] as const;

/** How long a SQLite process waits its turn for the write lock (another process migrating). */
const SQLITE_LOCK_WAIT_MS = 10 * 60_000;

/**
 * Opens the migrations' transaction on `conn` (one connection) once no other process migrates:
 * PostgreSQL waits on a transaction-level advisory lock, released by commit or rollback (or by the
 * database when the process dies); SQLite takes the write lock at `begin immediate`, so that no
 * other process reads the migrations table and then finds it changed. SQLite's busy timeout bounds
 * one wait; a migration of a large file can take longer, so the begin is tried again until
 * SQLITE_LOCK_WAIT_MS.
 */
export async function beginMigrationTransaction(conn: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === "postgres") {
    await sql`begin`.execute(conn);
    try {
      await sql`select pg_advisory_xact_lock(${sql.lit(PG_MIGRATION_LOCK[0])}, ${sql.lit(PG_MIGRATION_LOCK[1])})`.execute(
        conn,
      );
    } catch (e) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw e;
    }
    return;
  }
  const deadline = Date.now() + SQLITE_LOCK_WAIT_MS;
  for (;;) {
    try {
      await sql`begin immediate`.execute(conn);
      return;
    } catch (e) {
      if (driverError(e).code !== "SQLITE_BUSY" || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Whether `e` says the table does not exist (a new database): SQLite's message, PostgreSQL's 42P01. */
export function isMissingTable(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown };
  return err.code === "42P01" || (typeof err.message === "string" && /no such table/i.test(err.message));
}
