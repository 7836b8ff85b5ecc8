import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * Two-factor sign-in: each account's TOTP secret (encrypted; confirmed once a code proved the
 * enrolment), its single-use recovery codes (stored as keyed hashes), and the projects that
 * require two factors of their members.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id =
    dialect === "sqlite"
      ? sql.raw("create table account_recovery_codes (id integer primary key autoincrement")
      : sql.raw("create table account_recovery_codes (id bigserial primary key");

  await sql`create table account_totp (
    account_id bigint primary key references accounts(id) on delete cascade,
    secret_enc text not null, created_at bigint not null, confirmed_at bigint,
    last_step bigint not null default 0)`.execute(db);

  await sql`${id},
    account_id bigint not null references accounts(id) on delete cascade,
    code_hash text not null, created_at bigint not null, used_at bigint)`.execute(db);
  await sql`create unique index account_recovery_codes_hash on account_recovery_codes (account_id, code_hash)`.execute(
    db,
  );

  await sql`create table project_two_factor (
    project_id bigint primary key references projects(id) on delete cascade,
    required_at bigint not null, required_by bigint)`.execute(db);
}
