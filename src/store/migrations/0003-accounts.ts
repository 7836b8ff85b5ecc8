import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/** Accounts, sessions, one-time tokens, memberships, project access rules and usage counters. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id = (t: string) =>
    dialect === "sqlite"
      ? sql.raw(`create table ${t} (id integer primary key autoincrement`)
      : sql.raw(`create table ${t} (id bigserial primary key`);

  await sql`${id("accounts")},
    email text not null, full_name text not null, password_hash text not null,
    email_verified_at bigint, terms_accepted_at bigint not null,
    created_at bigint not null, password_changed_at bigint not null)`.execute(db);
  await sql`create unique index accounts_email on accounts (email)`.execute(db);

  await sql`create table sessions (
    id text primary key,
    account_id bigint not null references accounts(id) on delete cascade,
    created_at bigint not null, expires_at bigint not null, last_seen_at bigint not null)`.execute(db);
  await sql`create index sessions_account on sessions (account_id)`.execute(db);

  await sql`${id("account_tokens")},
    kind text not null, token_hash text not null, email text not null,
    account_id bigint references accounts(id) on delete cascade,
    project_id bigint references projects(id) on delete cascade,
    role text, created_by bigint, created_at bigint not null, expires_at bigint not null, used_at bigint)`.execute(
    db,
  );
  await sql`create unique index account_tokens_hash on account_tokens (token_hash)`.execute(db);
  await sql`create index account_tokens_email on account_tokens (email, kind)`.execute(db);
  await sql`create index account_tokens_project on account_tokens (project_id)`.execute(db);

  await sql`create table memberships (
    project_id bigint not null references projects(id) on delete cascade,
    account_id bigint not null references accounts(id) on delete cascade,
    role text not null, created_at bigint not null,
    primary key (project_id, account_id))`.execute(db);
  await sql`create index memberships_account on memberships (account_id)`.execute(db);

  await sql`create table project_access (
    project_id bigint primary key references projects(id) on delete cascade,
    allowed_ips text not null default '[]', allowed_origins text not null default '[]',
    updated_at bigint not null)`.execute(db);

  // No foreign key: a batch flushed just after a project's deletion must not fail for the others.
  await sql`create table usage_counters (
    project_id bigint not null, day text not null, endpoint text not null, metric text not null,
    count bigint not null, primary key (project_id, day, endpoint, metric))`.execute(db);
}
