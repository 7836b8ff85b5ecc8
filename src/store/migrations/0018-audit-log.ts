import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * The audit log (accounts/audit-log.ts): one row per change made through the console API or the
 * CLI, written in the transaction of the change. Append only: no code path updates a row; rows
 * older than AUDIT_RETENTION_DAYS are deleted by the periodic prune. No foreign key: the entries
 * of a deleted project stay until the retention ends (its deletion is itself an entry).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id =
    dialect === "sqlite"
      ? sql.raw("id integer primary key autoincrement")
      : sql.raw("id bigserial primary key");
  await sql`create table audit_log (
    ${id}, project_id bigint not null, at bigint not null, kind text not null,
    actor_type text not null, actor_account_id bigint, actor_email text, ip text,
    subject text not null default '', before_value text, after_value text)`.execute(db);
  await sql`create index audit_log_project on audit_log (project_id, id)`.execute(db);
  await sql`create index audit_log_at on audit_log (at)`.execute(db);
}
