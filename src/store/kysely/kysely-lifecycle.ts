import { type Kysely, sql, type Transaction } from "kysely";
import { beginMigrationTransaction, isMissingTable, type MigrationsTable } from "../migration-lock.js";
import { MIGRATIONS } from "../migrations.js";
import type { Dialect, Store, StoreParts } from "../store.js";
import { inTransaction, kyselyParts } from "./kysely-parts.js";
import type { Db } from "./rows.js";

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

/** True when `db` is an open transaction (a store over it runs nested transactions inline). */
export function isTransaction(db: Db): boolean {
  return (db as Transaction<unknown>).isTransaction;
}

/** The migrations not yet recorded (all of them while the table does not exist). */
async function pendingMigrations(conn: Kysely<unknown>): Promise<Array<(typeof MIGRATIONS)[number]>> {
  let done: Set<string>;
  try {
    const db = conn as unknown as Kysely<MigrationsTable>;
    done = new Set((await db.selectFrom("omniname_migrations").select("name").execute()).map((r) => r.name));
  } catch (e) {
    if (!isMissingTable(e)) throw e;
    done = new Set();
  }
  return MIGRATIONS.filter((m) => !done.has(m.name));
}

/**
 * Applies the pending migrations. Many processes may start at once on a new database (a deploy
 * of several replicas): they take turns through one lock held for the whole transaction (an
 * advisory lock on PostgreSQL, `begin immediate` on SQLite), so each sees what the one before it
 * applied and none races another's inserts or DDL. A store already up to date takes no lock.
 */
export async function migrate(db: Db, dialect: Dialect): Promise<void> {
  if ((await pendingMigrations(db as unknown as Kysely<unknown>)).length === 0) return;
  await db.connection().execute(async (c) => {
    const conn = c as unknown as Kysely<unknown>;
    await beginMigrationTransaction(conn, dialect);
    try {
      await sql`create table if not exists omniname_migrations (name text primary key, applied_at bigint not null)`.execute(
        conn,
      );
      const migrations = conn as unknown as Kysely<MigrationsTable>;
      for (const m of await pendingMigrations(conn)) {
        await migrations
          .insertInto("omniname_migrations")
          .values({ name: m.name, applied_at: Date.now() })
          .execute();
        await m.up(conn, dialect);
      }
      await sql`commit`.execute(conn);
    } catch (e) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw e;
    }
  });
}

export async function ping(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

export async function clearChainIndex(db: Db): Promise<void> {
  await inTransaction(db, async (trx) => {
    // Children before parents: records and reverse records reference domains.
    for (const t of CHAIN_TABLES) await trx.deleteFrom(t).execute();
  });
}

/**
 * A plain store over one handle: the parts (`parts`, by default the shared Kysely ones) and the
 * lifecycle. Backends build theirs over a transaction or a read snapshot with it; over a
 * transaction, `transaction` and `readSnapshot` run inside it.
 */
export function storeOver(dialect: Dialect, db: Db, parts: StoreParts = kyselyParts(db, dialect)): Store {
  const store: Store = {
    dialect,
    ...parts,
    migrate: () => migrate(db, dialect),
    ping: () => ping(db),
    close: () => db.destroy(),
    transaction: (fn) =>
      isTransaction(db) ? fn(store) : db.transaction().execute((trx) => fn(storeOver(dialect, trx))),
    readSnapshot: (fn) =>
      isTransaction(db)
        ? fn(store)
        : db
            .transaction()
            .setIsolationLevel("repeatable read")
            .execute((trx) => fn(storeOver(dialect, trx))),
    clearChainIndex: () => clearChainIndex(db),
  };
  return store;
}
