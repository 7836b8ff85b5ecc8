import { type Kysely, sql } from "kysely";
import { TLD_REGISTRATIONS_FILL, tldRegistrationsTriggers } from "../map-derived-ddl.js";
import type { Dialect } from "../store.js";

/**
 * `tld_registrations`: per (TLD, namespace, network), how many domains and the first registration
 * (the minimum non-null `registered_at`, as SQL's `min` has it). `listTldFirstRegistrations` (the
 * DNS role's zone set, every 5 s; the TLD-origin rule; zone export) read it instead of grouping
 * every domain: at ten million names that group-by was a multi-second scan.
 *
 * Kept by triggers on `domains`, so every writer (crawler, reorg undo, snapshot import, deletes)
 * keeps it exact without knowing of it:
 * - SQLite: row triggers (an upsert of a small table in the same B-tree pages: ~1 µs a row);
 * - PostgreSQL: statement triggers over transition tables, one grouped upsert per statement, so a
 *   bulk `INSERT … SELECT` of millions of rows updates each TLD's row once, not once a row (a row
 *   updated millions of times in one transaction leaves a chain of dead versions to walk).
 * Deleting the row that held a pair's first registration reads the next one through the
 * `domains_tld (tld, registered_at)` index.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === "postgres" ? sql.raw("bigint") : sql.raw("integer");
  await sql`create table tld_registrations (
    tld text not null,
    provider text not null,
    network text not null,
    domains ${bigint} not null,
    first_registered_at ${bigint},
    primary key (tld, provider, network)
  )`.execute(db);
  await sql.raw(TLD_REGISTRATIONS_FILL).execute(db);
  // The triggers' DDL is shared with the snapshot import's bulk load (map-derived-ddl.ts); on
  // PostgreSQL the functions and triggers run as one script, as they always did.
  const ddl = tldRegistrationsTriggers(dialect);
  if (dialect === "postgres") await sql.raw([...ddl.functions, ...ddl.triggers].join("")).execute(db);
  else for (const statement of ddl.triggers) await sql.raw(statement).execute(db);
}
