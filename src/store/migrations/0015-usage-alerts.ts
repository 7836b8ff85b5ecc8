import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * Usage alerts (accounts/usage-alerts.ts): one row per project, kind, subject and UTC day. The
 * unique index is what decides, across every API process, who mails: a process sends only when
 * its insert added the row, so two processes that cross 80 % of a quota at once mail once.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id =
    dialect === "sqlite"
      ? sql.raw("id integer primary key autoincrement")
      : sql.raw("id bigserial primary key");
  // No foreign key, like usage_counters: an alert raised just after a project's deletion must not
  // fail; the project's deletion removes its rows (ProjectsRepo.deleteProject).
  await sql`create table usage_alerts (
    ${id}, project_id bigint not null, kind text not null, subject text not null, day text not null,
    created_at bigint not null, details text not null, recipients integer not null default 0)`.execute(db);
  await sql`create unique index usage_alerts_once on usage_alerts (project_id, kind, subject, day)`.execute(
    db,
  );
  await sql`create index usage_alerts_recent on usage_alerts (project_id, created_at)`.execute(db);
}
