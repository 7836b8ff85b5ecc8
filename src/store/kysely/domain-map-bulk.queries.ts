import { sql } from "kysely";
import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import type {
  Domain,
  DomainRecord,
  DomainWithRecords,
  DomainWrite,
  ReverseRecord,
} from "../../domain/types.js";
import type { ReverseChange } from "../domain-map.port.js";
import type { DomainsTable, RecordsTable } from "../schema.js";
import { isPostgres } from "./crawler-log.queries.js";
import { jsonColumn, pgRowsFrom } from "./pg-json-columns.js";
import { removeReverse, setReverse, withRecords } from "./domain-map.queries.js";
import {
  DOMAIN_COLUMNS,
  type Db,
  type DomainRow,
  domainColumns,
  KEY_COLUMNS,
  MAX_IN,
  PG_DOMAIN_TYPES,
  toDomain,
} from "./rows.js";

/* The map's many-row writes and lookups by token (domain-map.port.ts), shared by both backends:
   the crawler's and the rescore's batches; one row at a time is domain-map.queries.ts. */

/** Rows per statement of updateDomainSignalsMany (six parameters a row). */
const SIGNAL_ROWS = 500;

/**
 * `updateDomainSignals` for many domains: one statement per 500 (a CTE of typed values joined by
 * id). A rescore page is one or two round trips instead of one per domain. PostgreSQL runs
 * `update … from v` as a nested loop over `v` and the primary key. SQLite's planner, given bound
 * values, scanned every domain (an index of the whole map) per statement and probed `v` for each,
 * a cost that grew with the map (36-50 ms a statement at 1,000,000 domains): there the rows are
 * chosen by `id in (select id from v)`, rowid lookups (4 ms). (PostgreSQL runs that form too, a
 * third slower.)
 */
export async function updateDomainSignalsMany(db: Db, rows: ReadonlyArray<SignalsRow>): Promise<void> {
  for (let i = 0; i < rows.length; i += SIGNAL_ROWS)
    await signalsUpdate(isPostgres(db), rows.slice(i, i + SIGNAL_ROWS)).execute(db);
}

/** A domain's new signals, by id. */
export type SignalsRow = {
  id: number;
  signals: Pick<Domain, "baseScore" | "spam" | "csamOk" | "kyc" | "tags">;
};

/** One statement of `updateDomainSignalsMany` (its plan is checked by the store tests). */
export function signalsUpdate(postgres: boolean, rows: ReadonlyArray<SignalsRow>) {
  const values = rows.map(
    ({ id, signals: s }) =>
      sql`(cast(${id} as bigint), cast(${s.baseScore} as integer), cast(${s.spam ? 1 : 0} as integer),
        cast(${s.csamOk ? 1 : 0} as integer), cast(${s.kyc ? 1 : 0} as integer), cast(${JSON.stringify(s.tags)} as text))`,
  );
  const v = sql`with v (id, base_score, spam, csam_ok, kyc, tags) as (values ${sql.join(values)})`;
  if (postgres)
    return sql`${v} update domains set base_score = v.base_score, spam = v.spam, csam_ok = v.csam_ok,
        kyc = v.kyc, tags = v.tags
      from v where domains.id = v.id`;
  return sql`${v} update domains set (base_score, spam, csam_ok, kyc, tags) =
      (select v.base_score, v.spam, v.csam_ok, v.kyc, v.tags from v where v.id = domains.id)
    where domains.id in (select v.id from v)`;
}

/** The changes with one per (address, network, provider), its last; sets and removes apart. */
export function lastReverseChanges(changes: readonly ReverseChange[]): {
  sets: ReverseRecord[];
  removes: ReverseChange[];
} {
  const last = new Map<string, ReverseChange>();
  for (const c of changes) last.set(`${c.address}|${c.network}|${c.provider}`, c);
  const sets: ReverseRecord[] = [];
  const removes: ReverseChange[] = [];
  for (const c of last.values()) {
    if (c.domainId === null) removes.push(c);
    else sets.push(c as ReverseRecord);
  }
  return { sets, removes };
}

/**
 * Reverse records set and removed, the last change of an address winning. PostgreSQL: one
 * `delete … using (rows)` and one `insert … select … on conflict do update` per 5,000, the rows
 * passed as JSON columns (pg-json-columns.ts): a round trip each, not one per address. SQLite: the
 * single-row statements (no round trips there).
 */
export async function applyReverses(db: Db, changes: readonly ReverseChange[]): Promise<void> {
  const { sets, removes } = lastReverseChanges(changes);
  if (!isPostgres(db)) {
    for (const r of removes) await removeReverse(db, r.address, r.network, r.provider);
    for (const r of sets) await setReverse(db, r);
    return;
  }
  const column = <K extends keyof ReverseChange>(list: readonly ReverseChange[], k: K) =>
    jsonColumn(list.map((c) => c[k]));
  for (let i = 0; i < removes.length; i += PG_ROWS) {
    const part = removes.slice(i, i + PG_ROWS);
    const rows = pgRowsFrom([
      ["address", "text", column(part, "address")],
      ["network", "text", column(part, "network")],
      ["provider", "text", column(part, "provider")],
    ]);
    await sql`delete from reverse_records r using (${rows}) as u
      where r.address = u.address and r.network = u.network and r.provider = u.provider`.execute(db);
  }
  for (let i = 0; i < sets.length; i += PG_ROWS) {
    const part = sets.slice(i, i + PG_ROWS);
    await sql`insert into reverse_records (network, provider, address, domain_id)
      ${pgRowsFrom([
        ["network", "text", column(part, "network")],
        ["provider", "text", column(part, "provider")],
        ["address", "text", column(part, "address")],
        ["domain_id", "bigint", column(part, "domainId")],
      ])}
      on conflict (address, network, provider) do update set domain_id = excluded.domain_id`.execute(db);
  }
}

/** PostgreSQL: rows per statement of the crawler's domain and record writes (JSON columns). */
const PG_ROWS = 5_000;

/**
 * PostgreSQL: one `insert … select … on conflict do update` per 5,000 domains, each column one
 * JSON array parameter (pg-json-columns.ts). The same rows, ids (in row order) and conflict rule
 * as the multi-row insert, without a 2,000-parameter query built and compiled per 100 rows;
 * the statement triggers keeping `name_holders` and `tld_registrations` run once per statement.
 */
async function upsertDomainsPostgres(
  db: Db,
  all: DomainWrite[],
  ids: Map<string, number>,
  inserted?: Set<number>,
): Promise<void> {
  const list = sql.join(DOMAIN_COLUMNS.map((c) => sql.ref(c)));
  const updates = sql.join(
    DOMAIN_COLUMNS.filter((c) => !KEY_COLUMNS.has(c)).map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`),
  );
  for (let i = 0; i < all.length; i += PG_ROWS) {
    const rows = all.slice(i, i + PG_ROWS).map(domainColumns);
    const columns = DOMAIN_COLUMNS.map(
      (c) =>
        [c, PG_DOMAIN_TYPES[c], jsonColumn(rows.map((r) => r[c as keyof Omit<DomainsTable, "id">]))] as const,
    );
    const res = await sql<{
      id: number;
      network: string;
      provider: string;
      token_id: string;
      inserted: boolean;
    }>`
      insert into domains (${list})
      ${pgRowsFrom(columns)}
      on conflict (network, provider, token_id) do update set ${updates}
      returning id, network, provider, token_id, (xmax = 0) as inserted`.execute(db);
    // A row this statement inserted has no xmax; one it updated carries the updating transaction's.
    for (const r of res.rows) {
      ids.set(`${r.network}|${r.provider}|${r.token_id}`, Number(r.id));
      if (inserted && r.inserted) inserted.add(Number(r.id));
    }
  }
}

/**
 * `inserted` (PostgreSQL): the ids of the rows inserted rather than updated are added to it (the
 * transaction store's domains without records yet: replaceRecordsMany skips their delete).
 */
export async function upsertDomains(
  db: Db,
  domains: DomainWrite[],
  inserted?: Set<number>,
): Promise<number[]> {
  const ids = new Map<string, number>();
  const keyOf = (network: string, provider: string, tokenId: string) => `${network}|${provider}|${tokenId}`;
  // One statement may not touch a row twice (PostgreSQL): the last write of a token wins.
  const unique = new Map(domains.map((d) => [keyOf(d.network, d.provider, d.tokenId), d]));
  const all = [...unique.values()];
  if (isPostgres(db)) {
    await upsertDomainsPostgres(db, all, ids, inserted);
    return domains.map((d) => ids.get(keyOf(d.network, d.provider, d.tokenId)) as number);
  }
  for (let i = 0; i < all.length; i += 100) {
    const rows = await db
      .insertInto("domains")
      .values(all.slice(i, i + 100).map(domainColumns))
      .onConflict((oc) =>
        oc.columns(["network", "provider", "token_id"]).doUpdateSet((eb) => ({
          name: eb.ref("excluded.name"),
          rname: eb.ref("excluded.rname"),
          sld: eb.ref("excluded.sld"),
          tld: eb.ref("excluded.tld"),
          owner: eb.ref("excluded.owner"),
          contract_address: eb.ref("excluded.contract_address"),
          resolver: eb.ref("excluded.resolver"),
          registered_at: eb.ref("excluded.registered_at"),
          registered_block: eb.ref("excluded.registered_block"),
          expires_at: eb.ref("excluded.expires_at"),
          last_update_block: eb.ref("excluded.last_update_block"),
          last_update_at: eb.ref("excluded.last_update_at"),
          base_score: eb.ref("excluded.base_score"),
          spam: eb.ref("excluded.spam"),
          csam_ok: eb.ref("excluded.csam_ok"),
          kyc: eb.ref("excluded.kyc"),
          tags: eb.ref("excluded.tags"),
        })),
      )
      .returning(["id", "network", "provider", "token_id"])
      .execute();
    for (const r of rows) ids.set(keyOf(r.network, r.provider, r.token_id), Number(r.id));
  }
  return domains.map((d) => ids.get(keyOf(d.network, d.provider, d.tokenId)) as number);
}

/** The lookup of (network, provider, token) among `tokenIds`: one query per MAX_IN tokens, to select from. */
function byTokens(db: Db, network: Network, provider: Provider, tokenIds: string[]) {
  const chunks = [];
  for (let i = 0; i < tokenIds.length; i += MAX_IN)
    chunks.push(
      db
        .selectFrom("domains")
        .where("network", "=", network)
        .where("provider", "=", provider)
        .where("token_id", "in", tokenIds.slice(i, i + MAX_IN)),
    );
  return chunks;
}

export async function findDomainIdsByTokens(
  db: Db,
  network: Network,
  provider: Provider,
  tokenIds: string[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const q of byTokens(db, network, provider, tokenIds))
    for (const r of await q.select(["id", "token_id"]).execute()) out.set(r.token_id, Number(r.id));
  return out;
}

export async function findDomainsByTokens(
  db: Db,
  network: Network,
  provider: Provider,
  tokenIds: string[],
): Promise<Map<string, DomainWithRecords>> {
  const out = new Map<string, DomainWithRecords>();
  for (const q of byTokens(db, network, provider, tokenIds)) {
    const rows = (await q.selectAll().execute()) as DomainRow[];
    for (const d of await withRecords(db, rows.map(toDomain))) out.set(d.tokenId, d);
  }
  return out;
}

/**
 * `recordless` (PostgreSQL): ids of domains known to have no records (inserted by this
 * transaction, records not written since): their delete is skipped, and they leave the set.
 */
export async function replaceRecordsMany(
  db: Db,
  items: Array<{ domainId: number; records: DomainRecord[] }>,
  recordless?: Set<number>,
): Promise<void> {
  if (isPostgres(db)) return replaceRecordsPostgres(db, items, recordless);
  for (let i = 0; i < items.length; i += MAX_IN) {
    const ids = items.slice(i, i + MAX_IN).map((it) => it.domainId);
    await db.deleteFrom("records").where("domain_id", "in", ids).execute();
  }
  const rows: RecordsTable[] = [];
  const seen = new Set<number>();
  for (const it of items) {
    if (seen.has(it.domainId)) continue; // a domain listed twice keeps its first record set
    seen.add(it.domainId);
    const unique = new Map(it.records.map((r) => [r.key, r]));
    for (const r of unique.values())
      rows.push({
        domain_id: it.domainId,
        key: r.key,
        value: r.value,
        native_key: r.nativeKey,
        native_value: r.nativeValue,
      });
  }
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto("records")
      .values(rows.slice(i, i + 500))
      .execute();
}

/**
 * PostgreSQL: the domains' records deleted by one `domain_id = any($1)` and inserted from JSON
 * columns, 5,000 domains a statement (the same rows as the multi-row path: a domain listed twice keeps its
 * first record set, the last record of a key wins).
 */
async function replaceRecordsPostgres(
  db: Db,
  items: Array<{ domainId: number; records: DomainRecord[] }>,
  recordless?: Set<number>,
): Promise<void> {
  // A backfill's domains are nearly all new: deleting their (absent) records costs a probe each,
  // and the planner, which cannot know that the ids are new, plans the delete of a few thousand
  // ids as a scan of the whole table once they look like a few percent of it.
  const stored = recordless ? items.filter((it) => !recordless.has(it.domainId)) : items;
  for (let i = 0; i < stored.length; i += PG_ROWS) {
    const ids = stored.slice(i, i + PG_ROWS).map((it) => it.domainId);
    await sql`delete from records where domain_id = any(${ids}::bigint[])`.execute(db);
  }
  if (recordless) for (const it of items) recordless.delete(it.domainId);
  const domainIds: number[] = [];
  const keys: string[] = [];
  const values: string[] = [];
  const nativeKeys: string[] = [];
  const nativeValues: string[] = [];
  const seen = new Set<number>();
  const flush = async () => {
    if (domainIds.length === 0) return;
    await sql`insert into records (domain_id, key, value, native_key, native_value)
      ${pgRowsFrom([
        ["domain_id", "bigint", jsonColumn(domainIds)],
        ["key", "text", jsonColumn(keys)],
        ["value", "text", jsonColumn(values)],
        ["native_key", "text", jsonColumn(nativeKeys)],
        ["native_value", "text", jsonColumn(nativeValues)],
      ])}`.execute(db);
    for (const a of [domainIds, keys, values, nativeKeys, nativeValues]) a.length = 0;
  };
  for (const it of items) {
    if (seen.has(it.domainId)) continue;
    seen.add(it.domainId);
    const unique = new Map(it.records.map((r) => [r.key, r]));
    for (const r of unique.values()) {
      domainIds.push(it.domainId);
      keys.push(r.key);
      values.push(r.value);
      nativeKeys.push(r.nativeKey);
      nativeValues.push(r.nativeValue);
    }
    if (domainIds.length >= PG_ROWS) await flush();
  }
  await flush();
}
