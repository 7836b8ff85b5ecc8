import { type Kysely, sql } from "kysely";
import { DEFERRED_TABLE, nameHoldersTriggers, tldRegistrationsTriggers } from "../map-derived-ddl.js";
import type { Dialect } from "../store.js";

/**
 * SQLite: the row triggers that keep `name_holders` and `tld_registrations` (migrations 0009,
 * 0010, 0014) were ~2/3 of the cost of a crawled domain's upsert. They are created again with a
 * condition: they fire only while `map_derived_deferred` is empty. The crawler's bulk writer fills
 * it for the span of one multi-row write inside its transaction and keeps both tables itself, one
 * grouped change per name and per (TLD, namespace, network) of the write
 * (sqlite/sqlite-derived-upkeep.ts), with the same `version` moves (RESCORE_VERSION_NOTE). The
 * row is never committed: every other writer and connection sees the triggers as before.
 *
 * PostgreSQL: its triggers are already per statement (transition tables); nothing changes.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== "sqlite") return;
  await sql.raw(`create table ${DEFERRED_TABLE} (id integer primary key)`).execute(db);
  for (const ddl of [nameHoldersTriggers("sqlite", true), tldRegistrationsTriggers("sqlite", true)]) {
    for (const name of ddl.names) await sql.raw(`drop trigger if exists ${name}`).execute(db);
    for (const statement of ddl.triggers) await sql.raw(statement).execute(db);
  }
}
