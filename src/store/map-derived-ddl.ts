import type { Dialect } from "./store.js";

/**
 * The tables derived from `domains` (`name_holders`, migration 0009; `tld_registrations`,
 * migration 0010): the triggers that keep them and the statements that fill them from scratch.
 * One definition for the migrations that create them and for the snapshot import's bulk load,
 * which drops the triggers while it loads an empty map, fills the tables set-based, then creates
 * the triggers again: the two cannot drift. The SQL is byte for byte what the migrations ran
 * before it moved here.
 */

/** The DDL of one derived table's triggers: functions (PostgreSQL only) and triggers. */
export interface TriggerDdl {
  /** Trigger names, all on `domains`. */
  names: readonly string[];
  /** Statements creating the trigger functions (PostgreSQL); the bulk load keeps them. */
  functions: readonly string[];
  /** Statements creating the triggers. */
  triggers: readonly string[];
}

/**
 * RESCORE_VERSION_NOTE: `name_holders.version` moves each time a name crosses between one holder
 * and several (the only change of the count that scoring sees: the `collision` tag), and
 * `scored_version` is the version the rescoring job last scored (migration 0014). Rows where the
 * two differ are the names whose domains the job must score again; nothing else is scanned.
 * A name first inserted with several holders at once (one bulk statement) starts unscored.
 *
 * One row per distinct name with its count of holders: what the triggers keep.
 */
export const NAME_HOLDERS_FILL =
  "insert into name_holders (name, holders) select name, count(*) from domains group by name";

/** Per (TLD, namespace, network): how many domains and the first registration. */
export const TLD_REGISTRATIONS_FILL = `insert into tld_registrations (tld, provider, network, domains, first_registered_at)
    select tld, provider, network, count(*), min(registered_at) from domains group by tld, provider, network`;

const NAME_HOLDERS_TRIGGERS = ["name_holders_insert", "name_holders_delete", "name_holders_rename"] as const;
const TLD_REGISTRATIONS_TRIGGERS = [
  "domains_tld_registrations_insert",
  "domains_tld_registrations_delete",
  "domains_tld_registrations_update",
] as const;

/**
 * The SQLite triggers as migrations 0009, 0010 and 0014 created them (`deferrable` false), or as
 * migration 0021 has them: each with the condition `DEFERRED_WHEN` (sqlite-derived-upkeep.ts).
 */
export function nameHoldersTriggers(dialect: Dialect, deferrable = false): TriggerDdl {
  return dialect === "sqlite" ? nameHoldersSqlite(deferrable) : nameHoldersPostgres();
}

export function tldRegistrationsTriggers(dialect: Dialect, deferrable = false): TriggerDdl {
  return dialect === "sqlite" ? tldRegistrationsSqlite(deferrable) : tldRegistrationsPostgres();
}

/**
 * SQLite, migration 0021: a trigger fires only while `map_derived_deferred` is empty. The crawler's
 * bulk writer fills it for the span of one multi-row write inside its transaction and keeps both
 * derived tables itself, once per write instead of once per row (sqlite-derived-upkeep.ts); every
 * other writer (and any other connection: the row never commits) sees the table empty and the
 * triggers as before.
 */
export const DEFERRED_TABLE = "map_derived_deferred";
const whenLive = (deferrable: boolean, extra?: string) => {
  const live = deferrable ? `not exists (select 1 from ${DEFERRED_TABLE})` : undefined;
  const all = [extra, live].filter((c) => c !== undefined);
  return all.length === 0 ? "" : `when ${all.join(" and ")}`;
};

/** Every trigger on the map's tables, with the statements that fill their tables from scratch. */
export function mapDerived(dialect: Dialect): { triggers: TriggerDdl[]; fills: string[]; tables: string[] } {
  return {
    triggers: [nameHoldersTriggers(dialect, true), tldRegistrationsTriggers(dialect, true)],
    fills: [NAME_HOLDERS_FILL, TLD_REGISTRATIONS_FILL],
    tables: ["name_holders", "tld_registrations"],
  };
}

function nameHoldersSqlite(deferrable: boolean): TriggerDdl {
  // `version` moves when the name crosses between one holder and several (RESCORE_VERSION_NOTE).
  const add = `insert into name_holders (name, holders) values (new.name, 1)
      on conflict (name) do update set holders = holders + 1, version = version + (holders = 1);`;
  // The last holder's row goes (the common case: most names have one), another's is counted down.
  const remove = `delete from name_holders where name = old.name and holders <= 1;
    update name_holders set holders = holders - 1, version = version + (holders = 2) where name = old.name;`;
  return {
    names: NAME_HOLDERS_TRIGGERS,
    functions: [],
    triggers: [
      `create trigger name_holders_insert after insert on domains ${whenLive(deferrable)} begin ${add} end`,
      `create trigger name_holders_delete after delete on domains ${whenLive(deferrable)} begin ${remove} end`,
      `create trigger name_holders_rename after update of name on domains
    ${whenLive(deferrable, "new.name <> old.name")} begin ${remove} ${add} end`,
    ],
  };
}

function nameHoldersPostgres(): TriggerDdl {
  // `version` moves when the name crosses between one holder and several (RESCORE_VERSION_NOTE).
  const add = (from: string) => `
    insert into name_holders (name, holders, version)
      select name, count(*), case when count(*) > 1 then 1 else 0 end from ${from} group by name order by name
      on conflict (name) do update set holders = name_holders.holders + excluded.holders,
        version = name_holders.version + case when name_holders.holders = 1 then 1 else 0 end;`;
  // Rows losing all their holders are deleted, then the others counted down: each row is written
  // once (an update before the delete doubled a bulk delete's cost). Two statements, not one with a
  // CTE: the second sees the first's deletes and re-reads a row a concurrent writer just changed.
  const remove = (from: string) => `
    delete from name_holders h using (select name, count(*) as n from ${from} group by name) g
      where h.name = g.name and h.holders <= g.n;
    update name_holders h set holders = h.holders - g.n,
        version = h.version + case when h.holders - g.n = 1 then 1 else 0 end
      from (select name, count(*) as n from ${from} group by name order by name) g where h.name = g.name;`;
  const fn = (name: string, body: string) => `create function ${name}() returns trigger language plpgsql as $$
      begin ${body} return null; end $$`;
  return {
    names: NAME_HOLDERS_TRIGGERS,
    functions: [
      fn("name_holders_insert", add("new_rows")),
      fn("name_holders_delete", remove("old_rows")),
      // A rename is rare (an update of the other columns does not fire it at all): per row.
      fn("name_holders_rename", `${remove("(select old.name) r")} ${add("(select new.name) r")}`),
    ],
    triggers: [
      `create trigger name_holders_insert after insert on domains
    referencing new table as new_rows for each statement execute function name_holders_insert()`,
      `create trigger name_holders_delete after delete on domains
    referencing old table as old_rows for each statement execute function name_holders_delete()`,
      `create trigger name_holders_rename after update of name on domains
    for each row when (old.name is distinct from new.name) execute function name_holders_rename()`,
    ],
  };
}

/** `first` after adding `r`: the smaller, a null counting as absent (SQL's min). */
const LEAST_SQLITE = `case when excluded.first_registered_at is null then tld_registrations.first_registered_at
  when tld_registrations.first_registered_at is null then excluded.first_registered_at
  else min(tld_registrations.first_registered_at, excluded.first_registered_at) end`;

function tldRegistrationsSqlite(deferrable: boolean): TriggerDdl {
  const add = (
    row: "new",
  ) => `insert into tld_registrations (tld, provider, network, domains, first_registered_at)
      values (${row}.tld, ${row}.provider, ${row}.network, 1, ${row}.registered_at)
      on conflict (tld, provider, network) do update set domains = tld_registrations.domains + 1,
        first_registered_at = ${LEAST_SQLITE};`;
  const remove = (row: "old") => `update tld_registrations set domains = domains - 1,
        first_registered_at = case when ${row}.registered_at is not null and ${row}.registered_at = first_registered_at
          then (select min(registered_at) from domains
                where tld = ${row}.tld and provider = ${row}.provider and network = ${row}.network)
          else first_registered_at end
      where tld = ${row}.tld and provider = ${row}.provider and network = ${row}.network;
      delete from tld_registrations
      where tld = ${row}.tld and provider = ${row}.provider and network = ${row}.network and domains <= 0;`;
  const changed = `old.tld is not new.tld or old.provider is not new.provider or old.network is not new.network
      or old.registered_at is not new.registered_at`;
  return {
    names: TLD_REGISTRATIONS_TRIGGERS,
    functions: [],
    triggers: [
      `create trigger domains_tld_registrations_insert after insert on domains ${whenLive(deferrable)} begin ${add("new")} end`,
      `create trigger domains_tld_registrations_delete after delete on domains ${whenLive(deferrable)} begin ${remove("old")} end`,
      // An upsert that rewrites a row with the same values changes nothing here.
      `create trigger domains_tld_registrations_update after update of tld, provider, network, registered_at on domains
    ${whenLive(deferrable, deferrable ? `(${changed})` : changed)}
    begin ${remove("old")} ${add("new")} end`,
    ],
  };
}

/**
 * PostgreSQL: one statement of functions and one of triggers; the migration runs the two as the
 * one script it always ran.
 */
function tldRegistrationsPostgres(): TriggerDdl {
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
  // An update is per row, and fires only when the pair or the registration changed: a statement
  // trigger over transition tables cannot name columns, so it ran for every update of domains
  // (signals, owners: a rescore's million one-row updates paid a function call each).
  const row = (side: "old" | "new") =>
    `(select ${side}.tld as tld, ${side}.provider as provider, ${side}.network as network,
      ${side}.registered_at as registered_at) c`;
  return {
    names: TLD_REGISTRATIONS_TRIGGERS,
    functions: [
      `
    create function tld_registrations_on_insert() returns trigger language plpgsql as $$
    begin ${enter("new_rows")} return null; end $$;
    create function tld_registrations_on_delete() returns trigger language plpgsql as $$
    begin ${leave("old_rows")} return null; end $$;
    create function tld_registrations_on_update() returns trigger language plpgsql as $$
    begin ${leave(row("old"))} ${enter(row("new"))} return null; end $$;`,
    ],
    triggers: [
      `
    create trigger domains_tld_registrations_insert after insert on domains
      referencing new table as new_rows for each statement execute function tld_registrations_on_insert();
    create trigger domains_tld_registrations_delete after delete on domains
      referencing old table as old_rows for each statement execute function tld_registrations_on_delete();
    create trigger domains_tld_registrations_update
      after update of tld, provider, network, registered_at on domains for each row
      when (old.tld is distinct from new.tld or old.provider is distinct from new.provider
        or old.network is distinct from new.network or old.registered_at is distinct from new.registered_at)
      execute function tld_registrations_on_update();
  `,
    ],
  };
}
