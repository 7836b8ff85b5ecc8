import { type Kysely, sql } from "kysely";
import { NAME_HOLDERS_FILL, nameHoldersTriggers } from "../map-derived-ddl.js";
import type { Dialect } from "../store.js";

/**
 * `name_holders`: one row per distinct domain name, with how many domains hold it (the collision
 * index) and its TR39 skeleton (the lookalike index). Triggers on `domains` keep `holders` exact
 * whoever writes: the crawler, a reorg replay, a snapshot import (multi-row INSERT, COPY, INSERT …
 * SELECT), `clearChainIndex`; a name's row goes when its last domain does. `skeleton` is computed
 * in JS (scoring/skeleton.ts), so the database cannot: it is NULL until the scoring jobs fill it
 * (`name_holders_skeleton` finds them), which they do before they read the lookalike groups. A skeleton is a
 * pure function of the name, so a filled one never goes stale.
 *
 * PostgreSQL's insert and delete triggers are per statement, over transition tables: one grouped upsert per
 * statement (cheap for bulk imports) that locks the name rows in name order (two writers whose
 * ranges share names do not deadlock on them within one statement).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // SQLite: clustered by name (no rowid table beside the key's index): a write touches one B-tree
  // fewer. The skeleton index also finds the rows still to fill (`skeleton is null`).
  await sql`create table name_holders (
    name text primary key, holders integer not null, skeleton text)${
      dialect === "sqlite" ? sql.raw(" without rowid") : sql.raw("")
    }`.execute(db);
  await sql`create index name_holders_shared on name_holders (name) where holders > 1`.execute(db);
  await sql`create index name_holders_skeleton on name_holders (skeleton)`.execute(db);
  await sql.raw(NAME_HOLDERS_FILL).execute(db);
  // The triggers' DDL is shared with the snapshot import's bulk load (map-derived-ddl.ts).
  const ddl = nameHoldersTriggers(dialect);
  for (const statement of [...ddl.functions, ...ddl.triggers]) await sql.raw(statement).execute(db);
}
