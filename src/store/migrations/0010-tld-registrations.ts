import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * `tld_registrations`: per (TLD, namespace, network), how many domains and the first registration
 * (the minimum non-null `registered_at`, as SQL's `min` has it). `listTldFirstRegistrations` (the
 * DNS role's zone set, every 5 s; the TLD-origin rule; zone export) read it instead of grouping
 * every domain: at ten million names that group-by was a multi-second scan.
 *
 * Kept by triggers on `domains`, so every writer (crawler, reorg undo, snapshot import, deletes)
 * keeps it exact without knowing of it:
 * - SQLite: row triggers (an upsert of a small table in the same B-tree pages: ~1 µs a row);
 * - PostgreSQL: statement triggers over transition tables, one grouped upsert per statement, so a
 *   bulk `INSERT … SELECT` of millions of rows updates each TLD's row once, not once a row (a row
 *   updated millions of times in one transaction leaves a chain of dead versions to walk).
 * Deleting the row that held a pair's first registration reads the next one through the
 * `domains_tld (tld, registered_at)` index.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === "postgres" ? sql.raw("bigint") : sql.raw("integer");
  await sql`create table tld_registrations (
    tld text not null,
    provider text not null,
    network text not null,
    domains ${bigint} not null,
    first_registered_at ${bigint},
    primary key (tld, provider, network)
  )`.execute(db);
  await sql`insert into tld_registrations (tld, provider, network, domains, first_registered_at)
    select tld, provider, network, count(*), min(registered_at) from domains group by tld, provider, network`.execute(
    db,
  );
  if (dialect === "postgres") await postgresTriggers(db);
  else await sqliteTriggers(db);
}

/** `first` after adding `r`: the smaller, a null counting as absent (SQL's min). */
const LEAST_SQLITE = `case when excluded.first_registered_at is null then tld_registrations.first_registered_at
  when tld_registrations.first_registered_at is null then excluded.first_registered_at
  else min(tld_registrations.first_registered_at, excluded.first_registered_at) end`;

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const add = (row: "new") =>
    sql.raw(`insert into tld_registrations (tld, provider, network, domains, first_registered_at)
      values (${row}.tld, ${row}.provider, ${row}.network, 1, ${row}.registered_at)
      on conflict (tld, provider, network) do update set domains = tld_registrations.domains + 1,
        first_registered_at = ${LEAST_SQLITE};`);
  const remove = (row: "old") =>
    sql.raw(`update tld_registrations set domains = domains - 1,
        first_registered_at = case when ${row}.registered_at is not null and ${row}.registered_at = first_registered_at
          then (select min(registered_at) from domains
                where tld = ${row}.tld and provider = ${row}.provider and network = ${row}.network)
          else first_registered_at end
      where tld = ${row}.tld and provider = ${row}.provider and network = ${row}.network;
      delete from tld_registrations
      where tld = ${row}.tld and provider = ${row}.provider and network = ${row}.network and domains <= 0;`);
  await sql`create trigger domains_tld_registrations_insert after insert on domains begin ${add("new")} end`.execute(
    db,
  );
  await sql`create trigger domains_tld_registrations_delete after delete on domains begin ${remove("old")} end`.execute(
    db,
  );
  // An upsert that rewrites a row with the same values changes nothing here.
  await sql`create trigger domains_tld_registrations_update after update of tld, provider, network, registered_at on domains
    when old.tld is not new.tld or old.provider is not new.provider or old.network is not new.network
      or old.registered_at is not new.registered_at
    begin ${remove("old")} ${add("new")} end`.execute(db);
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  // Rows leaving a pair, then rows entering one, each grouped by pair: one statement each.
  const leave = (rows: string) => `
    update tld_registrations t set domains = t.domains - g.n,
      first_registered_at = case when g.first is not null and g.first <= t.first_registered_at
        then (select min(d.registered_at) from domains d
              where d.tld = t.tld and d.provider = t.provider and d.network = t.network)
        else t.first_registered_at end
    from (select tld, provider, network, count(*) as n, min(registered_at) as first from ${rows}
          group by tld, provider, network) g
    where t.tld = g.tld and t.provider = g.provider and t.network = g.network;
    delete from tld_registrations where domains <= 0;`;
  const enter = (rows: string) => `
    insert into tld_registrations as t (tld, provider, network, domains, first_registered_at)
      select tld, provider, network, count(*), min(registered_at) from ${rows} group by tld, provider, network
    on conflict (tld, provider, network) do update set domains = t.domains + excluded.domains,
      first_registered_at = case when excluded.first_registered_at is null then t.first_registered_at
        when t.first_registered_at is null then excluded.first_registered_at
        else least(t.first_registered_at, excluded.first_registered_at) end;`;
  // An update only moves the rows whose pair or registration changed.
  const changed = (side: "old_rows" | "new_rows") => `(select ${side}.* from old_rows join new_rows using (id)
    where old_rows.tld is distinct from new_rows.tld or old_rows.provider is distinct from new_rows.provider
      or old_rows.network is distinct from new_rows.network
      or old_rows.registered_at is distinct from new_rows.registered_at) c`;
  await sql
    .raw(`
    create function tld_registrations_on_insert() returns trigger language plpgsql as $$
    begin ${enter("new_rows")} return null; end $$;
    create function tld_registrations_on_delete() returns trigger language plpgsql as $$
    begin ${leave("old_rows")} return null; end $$;
    create function tld_registrations_on_update() returns trigger language plpgsql as $$
    begin ${leave(changed("old_rows"))} ${enter(changed("new_rows"))} return null; end $$;
    create trigger domains_tld_registrations_insert after insert on domains
      referencing new table as new_rows for each statement execute function tld_registrations_on_insert();
    create trigger domains_tld_registrations_delete after delete on domains
      referencing old table as old_rows for each statement execute function tld_registrations_on_delete();
    create trigger domains_tld_registrations_update after update on domains
      referencing old table as old_rows new table as new_rows
      for each statement execute function tld_registrations_on_update();
  `)
    .execute(db);
}
