import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/** Domains, records, reverse records, checkpoints, the event journal, projects and API keys. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id = (t: string) =>
    dialect === "sqlite"
      ? sql.raw(`create table ${t} (id integer primary key autoincrement`)
      : sql.raw(`create table ${t} (id bigserial primary key`);

  await sql`${id("domains")},
    provider text not null, network text not null, token_id text not null,
    name text not null, sld text not null, tld text not null,
    owner text not null, contract_address text not null, resolver text,
    registered_at bigint, registered_block bigint, expires_at bigint,
    last_update_block bigint not null default 0, last_update_at bigint not null,
    base_score integer not null default 50, spam integer not null default 0,
    csam_ok integer not null default 1, kyc integer not null default 0, tags text not null default '[]')`.execute(
    db,
  );
  await sql`create unique index domains_token on domains (network, provider, token_id)`.execute(db);
  await sql`create index domains_name on domains (name)`.execute(db);
  await sql`create index domains_owner on domains (owner)`.execute(db);
  await sql`create index domains_tld on domains (tld, registered_at)`.execute(db);

  await sql`create table records (
    domain_id bigint not null references domains(id) on delete cascade,
    key text not null, value text not null, native_key text not null, native_value text not null,
    primary key (domain_id, key))${
      // SQLite: cluster records by (domain_id, key), so a domain's records are one range scan
      // rather than an index probe plus a row lookup each (the API's hot path reads them).
      dialect === "sqlite" ? sql.raw(" without rowid") : sql.raw("")
    }`.execute(db);
  await sql`create index records_native on records (domain_id, native_key)`.execute(db);

  await sql`create table reverse_records (
    network text not null, provider text not null, address text not null,
    domain_id bigint not null references domains(id) on delete cascade,
    primary key (address, network, provider))`.execute(db);
  await sql`create index reverse_domain on reverse_records (domain_id)`.execute(db);

  await sql`create table checkpoints (
    source_id text primary key, chain_id bigint not null, block_number bigint not null,
    block_hash text not null, updated_at bigint not null, state text not null default 'syncing', error text)`.execute(
    db,
  );

  await sql`${id("journal")},
    source_id text not null, chain_id bigint not null, block_number bigint not null, block_hash text not null,
    log_index integer not null, tx_hash text not null, contract text not null, token_id text, event text not null)`.execute(
    db,
  );
  await sql`create unique index journal_position on journal (chain_id, block_hash, log_index)`.execute(db);
  await sql`create index journal_block on journal (chain_id, block_number)`.execute(db);
  await sql`create index journal_token on journal (source_id, token_id)`.execute(db);

  await sql`${id("projects")},
    name text not null, description text not null default '', plan text not null default 'free',
    created_at bigint not null, settings text not null default '{}')`.execute(db);
  await sql`create unique index projects_name on projects (name)`.execute(db);

  await sql`${id("api_keys")},
    project_id bigint not null references projects(id) on delete cascade,
    name text not null default '', prefix text not null, hash text not null,
    created_at bigint not null, last_used_at bigint, revoked_at bigint)`.execute(db);
  await sql`create unique index api_keys_hash on api_keys (hash)`.execute(db);
  await sql`create index api_keys_project on api_keys (project_id)`.execute(db);
}
