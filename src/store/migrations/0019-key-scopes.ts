import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * API keys with limits of their own (accounts/key-scopes.ts): per key the endpoints, networks and
 * providers it may use (`scopes`, JSON, null: all), an expiry (`expires_at`, null: never) and the
 * key that replaced it in a rotation (`rotated_to`). `api_key_usage` holds the requests of each key
 * per UTC month, added by the usage flush (accounts/usage.ts) with additive upserts like
 * usage_counters, so several API processes add up.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`alter table api_keys add column scopes text`.execute(db);
  await sql`alter table api_keys add column expires_at bigint`.execute(db);
  await sql`alter table api_keys add column rotated_to bigint`.execute(db);
  // No foreign key, like usage_counters: a flush just after a project's deletion must not fail; the
  // project's deletion removes its rows (ProjectsRepo.deleteProject).
  await sql`create table api_key_usage (
    key_id bigint not null, month text not null, project_id bigint not null,
    requests bigint not null default 0, primary key (key_id, month))`.execute(db);
  await sql`create index api_key_usage_project on api_key_usage (project_id, month)`.execute(db);
}
