import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * `settings_winner_jobs` (migration 0022) learns to fail: a page that throws counts an attempt
 * (`attempts`, reset by every page that commits), records the error (`last_error`) and is retried
 * from `retry_at` on, after a growing delay; after the last attempt the job is finished with
 * `failed_at` set, so that it no longer holds back the jobs behind it. Only the jobs of the same
 * project wait for an unfinished older one (their events stay in order); other projects' jobs go on.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`alter table settings_winner_jobs add column attempts integer not null default 0`.execute(db);
  await sql`alter table settings_winner_jobs add column retry_at bigint`.execute(db);
  await sql`alter table settings_winner_jobs add column last_error text`.execute(db);
  await sql`alter table settings_winner_jobs add column failed_at bigint`.execute(db);
}
