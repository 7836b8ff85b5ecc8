import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * `settings_winner_jobs` (settings-winner-jobs.port.ts): one row per change of a project's
 * resolution settings, appended in the transaction that saves them. The API processes rank the
 * names it affects in pages and append their `winner.changed` events, each page with a conditional
 * advance of `pages` (the version) and of the cursor (`phase`, `cursor_name`: the last name done).
 * `finished_at` is set when the last page is done; finished jobs are pruned after the change log's
 * retention. Index `settings_winner_jobs_open` (partial): the oldest unfinished job.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id =
    dialect === "sqlite"
      ? sql.raw("id integer primary key autoincrement")
      : sql.raw("id bigserial primary key");
  await sql`create table settings_winner_jobs (
    ${id},
    project_id bigint not null,
    settings_before text not null,
    settings_after text not null,
    rank_at bigint not null,
    phase integer not null default 0,
    cursor_name text,
    pages bigint not null default 0,
    created_at bigint not null,
    finished_at bigint)`.execute(db);
  await sql`create index settings_winner_jobs_open on settings_winner_jobs (id) where finished_at is null`.execute(
    db,
  );
  await sql`create index settings_winner_jobs_finished on settings_winner_jobs (finished_at)`.execute(db);
}
