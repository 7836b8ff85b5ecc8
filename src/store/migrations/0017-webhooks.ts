import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * Webhooks (docs/console-api.md, "Webhooks"): the endpoints of each project (the signing secret
 * encrypted; `cursor` is the last change log id fanned out to it), the durable delivery queue
 * (one row per message; a lease names the one process delivering it), and the delivery log.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id =
    dialect === "sqlite"
      ? sql.raw("id integer primary key autoincrement")
      : sql.raw("id bigserial primary key");
  await sql`create table webhooks (
    ${id}, project_id bigint not null, url text not null, description text not null default '',
    event_types text not null, filters text not null, enabled integer not null,
    secret_enc text not null, cursor bigint not null, created_at bigint not null,
    updated_at bigint not null, failing_since bigint, disabled_at bigint,
    disabled_reason text)`.execute(db);
  await sql`create index webhooks_project on webhooks (project_id)`.execute(db);

  // No foreign keys: a message of a webhook deleted meanwhile is dropped by its deletion
  // (WebhooksRepo.delete), not by a cascade SQLite would enforce only on some connections.
  await sql`create table webhook_messages (
    ${id}, webhook_id bigint not null, event_id bigint, msg_id text not null,
    event_type text not null, name text not null, payload text not null,
    created_at bigint not null, status text not null, attempts integer not null default 0,
    next_attempt_at bigint not null, lease_owner text, lease_until bigint,
    delivered_at bigint)`.execute(db);
  await sql`create unique index webhook_messages_once on webhook_messages (webhook_id, msg_id)`.execute(db);
  await sql`create index webhook_messages_due on webhook_messages (status, next_attempt_at)`.execute(db);
  await sql`create index webhook_messages_name on webhook_messages (webhook_id, name, status, id)`.execute(
    db,
  );

  await sql`create table webhook_attempts (
    ${id}, webhook_id bigint not null, message_id bigint not null, msg_id text not null,
    event_type text not null, attempt integer not null, at bigint not null,
    status_code integer, outcome text not null, latency_ms integer not null,
    response_start text not null, error text)`.execute(db);
  await sql`create index webhook_attempts_recent on webhook_attempts (webhook_id, id)`.execute(db);
}
