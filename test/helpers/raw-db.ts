import { type Kysely, sql } from "kysely";
import type { Database } from "../../src/store/schema.js";
import type { Store } from "../../src/store/store.js";

/** A backend store (sqlite/sqlite-store.ts, postgres/postgres-store.ts): its handle is not part of the port. */
export interface KyselyBacked extends Store {
  readonly db: Kysely<Database>;
}

/**
 * The backend's own query builder, for tests that check rows the port does not expose (journal
 * rows of orphaned blocks, raw record columns). Production code goes through the port.
 */
export function rawDb(store: Store): Kysely<Database> {
  const db = (store as Partial<KyselyBacked>).db;
  if (db === undefined) throw new Error("rawDb: not a Kysely-backed store");
  return db;
}

/** A table's indexes with their definitions (SQLite's DDL, PostgreSQL's `indexdef`), by name. */
export async function indexesOf(
  db: Kysely<Database>,
  dialect: string,
  table: string,
): Promise<Array<{ name: string; sql: string }>> {
  const rows =
    dialect === "sqlite"
      ? await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
          where type = 'index' and tbl_name = ${table} order by name`.execute(db)
      : await sql<{ name: string; sql: string }>`select indexname as name, indexdef as sql from pg_indexes
          where tablename = ${table} order by indexname`.execute(db);
  return rows.rows;
}
