import { type Kysely, sql } from "kysely";
import { nameHoldersTriggers } from "../map-derived-ddl.js";
import type { Dialect } from "../store.js";

/**
 * Incremental rescoring (jobs/rescore.job.ts, `rescoreChanged`): the periodic pass scores only
 * what changed instead of every domain.
 *
 * - `name_holders.version` / `scored_version`: the name index's triggers move `version` when a
 *   name crosses between one holder and several (map-derived-ddl.ts, RESCORE_VERSION_NOTE); the
 *   job scores that name's domains and stores the version it scored. A partial index finds the
 *   names still to score, so a pass reads only them.
 * - `scoring_state`: what the last pass scored with (a fingerprint of the operator's lists and
 *   rules, the TLD origins and lookalikes), so that a restart does not rescore the whole map when
 *   nothing it depends on changed.
 *
 * The name index's triggers are created again with the current DDL (the version bumps).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await sql`alter table name_holders add column version integer not null default 0`.execute(db);
  await sql`alter table name_holders add column scored_version integer not null default 0`.execute(db);
  await sql`create index name_holders_unscored on name_holders (name) where version <> scored_version`.execute(
    db,
  );
  await sql`create table scoring_state (key text primary key, value text not null)`.execute(db);
  const ddl = nameHoldersTriggers(dialect);
  for (const name of ddl.names) {
    await sql
      .raw(
        dialect === "sqlite" ? `drop trigger if exists ${name}` : `drop trigger if exists ${name} on domains`,
      )
      .execute(db);
    if (dialect === "postgres") await sql.raw(`drop function if exists ${name}()`).execute(db);
  }
  for (const statement of [...ddl.functions, ...ddl.triggers]) await sql.raw(statement).execute(db);
}
