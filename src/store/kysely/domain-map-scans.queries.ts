import { PostgresAdapter, sql } from "kysely";
import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import type { DomainRecord, DomainWithRecords, ReverseRecord } from "../../domain/types.js";
import { toReverse, withRecords } from "./domain-map.queries.js";
import { DOMAIN_COLUMNS, type Db, type DomainRow, MAX_IN, pagesById, toDomain } from "./rows.js";

/*
 * The map's whole-map scans (domain-map.port.ts), shared by both backends: snapshot export, zone
 * export and the scoring jobs read the map through these, in pages, so their memory is one page.
 */

export async function listReverseRecords(db: Db): Promise<ReverseRecord[]> {
  const rows = await db
    .selectFrom("reverse_records")
    .selectAll()
    .orderBy("address")
    .orderBy("network")
    .orderBy("provider")
    .execute();
  return rows.map(toReverse);
}

export async function findReverseByDomainIds(db: Db, domainIds: number[]): Promise<ReverseRecord[]> {
  const out: ReverseRecord[] = [];
  for (let i = 0; i < domainIds.length; i += MAX_IN) {
    const rows = await db
      .selectFrom("reverse_records")
      .selectAll()
      .where("domain_id", "in", domainIds.slice(i, i + MAX_IN))
      .execute();
    for (const r of rows) out.push(toReverse(r));
  }
  return out;
}

export async function countDomains(db: Db): Promise<number> {
  const r = await db
    .selectFrom("domains")
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function* iterateDomains(db: Db, pageSize = 1000): AsyncIterable<DomainWithRecords[]> {
  const pages = pagesById(
    (after, limit) =>
      db.selectFrom("domains").selectAll().where("id", ">", after).orderBy("id").limit(limit).execute(),
    pageSize,
  );
  for await (const rows of pages)
    yield await withRecords(
      db,
      rows.map((r) => toDomain(r as DomainRow)),
    );
}

/**
 * A full page of rows in name order without its last name's rows: that name may go on past the
 * page, so its domains are read whole by the caller (one index range) and no name is split. A
 * page that is not full is returned as is.
 */
export function withoutLastName<T extends { name: string }>(rows: T[], pageSize: number): T[] {
  if (rows.length < pageSize) return rows;
  const last = rows[rows.length - 1].name;
  let cut = rows.length - 1;
  while (cut > 0 && rows[cut - 1].name === last) cut--;
  return rows.slice(0, cut);
}

/** `iterateDomainsByName`'s options (domain-map.port.ts). */
export interface ByNameOptions {
  /** Only the records whose key starts with one of these (lower-case letters, digits, dots). */
  recordKeys?: readonly string[];
  /**
   * Read the next pages while the caller works on this one: on SQLite on a worker thread of its
   * own (sqlite-name-scan-worker.ts; a file store's reader only), on PostgreSQL always (one page
   * ahead in a `transaction()`, here; elsewhere the whole scan is one COPY, pg-name-scan.ts).
   */
  readAhead?: boolean;
}

/**
 * The SQL condition on `r.key` that keeps the records of `recordKeys` ("" for all of them): the
 * prefixes are inlined (checked to hold no pattern character), `glob` on SQLite (`like` ignores
 * case there), `like` on PostgreSQL.
 */
export function recordKeyCondition(
  recordKeys: readonly string[] | undefined,
  dialect: "sqlite" | "pg",
): string {
  if (recordKeys === undefined) return "";
  if (recordKeys.length === 0) return " and false";
  for (const p of recordKeys)
    if (!/^[a-z0-9.]+$/.test(p))
      throw new Error(`record key prefix ${JSON.stringify(p)}: a-z, 0-9 and . only`);
  const op = dialect === "sqlite" ? (p: string) => `r.key glob '${p}*'` : (p: string) => `r.key like '${p}%'`;
  return ` and (${recordKeys.map(op).join(" or ")})`;
}

/** Whether a record's key starts with one of `recordKeys` (all of them when absent). */
function keptKey(key: string, recordKeys: readonly string[] | undefined): boolean {
  return recordKeys === undefined || recordKeys.some((p) => key.startsWith(p));
}

/**
 * The columns a domain is made of (rows.ts `toDomain`: the written ones but `rname`, after the
 * id), in the order the scans select them and `readDomain` reads them.
 */
export const DOMAIN_READ_COLUMNS = ["id", ...DOMAIN_COLUMNS.filter((c) => c !== "rname")] as const;

/** Each column's place in a row of DOMAIN_READ_COLUMNS. */
const AT = Object.freeze(Object.fromEntries(DOMAIN_READ_COLUMNS.map((c, i) => [c, i]))) as {
  readonly [C in (typeof DOMAIN_READ_COLUMNS)[number]]: number;
};

/**
 * How a scan's format gives a field: JSON values (`toDomainWithRecords`) or the text fields of
 * PostgreSQL's COPY (postgres/pg-name-scan.ts). `readDomain` is the one mapping of the columns
 * to a domain; a format only says how a number, a text, a null and a flag are written.
 */
export interface FieldReader<F> {
  int(v: F): number;
  intOrNull(v: F): number | null;
  text(v: F): string;
  textOrNull(v: F): string | null;
  /** The flags are integers 0 / 1 on both stores. */
  bool(v: F): boolean;
}

/** A row of DOMAIN_READ_COLUMNS as rows.ts `toDomain` makes it, `records` its records. */
export function readDomain<F>(
  f: readonly F[],
  r: FieldReader<F>,
  records: DomainRecord[],
): DomainWithRecords {
  const tags = r.text(f[AT.tags]);
  return {
    id: r.int(f[AT.id]),
    provider: r.text(f[AT.provider]) as Provider,
    network: r.text(f[AT.network]) as Network,
    tokenId: r.text(f[AT.token_id]),
    name: r.text(f[AT.name]),
    sld: r.text(f[AT.sld]),
    tld: r.text(f[AT.tld]),
    owner: r.text(f[AT.owner]),
    contractAddress: r.text(f[AT.contract_address]),
    resolver: r.textOrNull(f[AT.resolver]),
    registeredAt: r.intOrNull(f[AT.registered_at]),
    registeredBlock: r.intOrNull(f[AT.registered_block]),
    expiresAt: r.intOrNull(f[AT.expires_at]),
    lastUpdateBlock: r.int(f[AT.last_update_block]),
    lastUpdateAt: r.int(f[AT.last_update_at]),
    baseScore: r.int(f[AT.base_score]),
    spam: r.bool(f[AT.spam]),
    csamOk: r.bool(f[AT.csam_ok]),
    kyc: r.bool(f[AT.kyc]),
    // Most domains have no tag: no JSON.parse for those.
    tags: tags === "[]" ? [] : (JSON.parse(tags) as string[]),
    records,
  };
}

/** The fields of a JSON array (SQLite's `json_array`, PostgreSQL's `json_build_array`). */
export const JSON_FIELDS: FieldReader<unknown> = {
  int: (v) => Number(v),
  intOrNull: (v) => (v === null ? null : Number(v)),
  text: (v) => v as string,
  textOrNull: (v) => v as string | null,
  bool: (v) => Boolean(v),
};

/** A row of DOMAIN_READ_COLUMNS (a JSON array) as a domain, with its records' tuples. */
export function toDomainWithRecords(a: unknown[], tuples: readonly string[][]): DomainWithRecords {
  const records: DomainRecord[] = [];
  for (const [key, value, nativeKey, nativeValue] of tuples)
    records.push({ key, value, nativeKey, nativeValue });
  return readDomain(a, JSON_FIELDS, records);
}

/**
 * PostgreSQL: each domain as one JSON text (DOMAIN_READ_COLUMNS, then its records as [key, value,
 * native_key, native_value] in key order), so that a page is one statement and one round trip,
 * and the client parses one text column a row (a page is one `JSON.parse`), not 21 typed columns
 * and a json one.
 */
function byNameWithRecords(db: Db, opts: ByNameOptions) {
  const recs = `coalesce((select json_agg(json_build_array(r.key, r.value, r.native_key, r.native_value)
    order by r.key) from records r where r.domain_id = d.id${recordKeyCondition(opts.recordKeys, "pg")}), '[]'::json)`;
  const row = sql<string>`json_build_array(${sql.raw(DOMAIN_READ_COLUMNS.map((c) => `d.${c}`).join(", "))}, ${sql.raw(recs)})::text`;
  return db.selectFrom("domains as d").select(["d.name", row.as("j")]);
}

/** A page of `byNameWithRecords` rows as domains: their texts parsed at once. */
function fromJsonRows(rows: readonly { j: string }[]): DomainWithRecords[] {
  const arrays = JSON.parse(`[${rows.map((r) => r.j).join(",")}]`) as unknown[][];
  return arrays.map((a) => toDomainWithRecords(a, a[DOMAIN_READ_COLUMNS.length] as string[][]));
}

/**
 * The map in name then id order, in pages of whole names (domain-map.port.ts). Keyset paging by
 * name: rows written meanwhile never shift a page.
 */
export async function* iterateDomainsByName(
  db: Db,
  pageSize = 1000,
  opts: ByNameOptions = {},
): AsyncIterable<DomainWithRecords[]> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    yield* iterateDomainsByNamePg(db, pageSize, opts);
    return;
  }
  const byName = () => db.selectFrom("domains").selectAll();
  let after: string | null = null;
  for (;;) {
    const from: string | null = after;
    const q = from === null ? byName() : byName().where("name", ">", from);
    const rows = (await q.orderBy("name").orderBy("id").limit(pageSize).execute()) as DomainRow[];
    if (rows.length === 0) return;
    after = rows[rows.length - 1].name;
    const page = withoutLastName(rows, pageSize);
    if (page.length < rows.length)
      page.push(...((await byName().where("name", "=", after).orderBy("id").execute()) as DomainRow[]));
    if (page.length === 0) continue;
    const domains = await withRecords(db, page.map(toDomain));
    if (opts.recordKeys !== undefined)
      for (const d of domains) d.records = d.records.filter((r) => keptKey(r.key, opts.recordKeys));
    yield domains;
  }
}

/**
 * iterateDomainsByName on PostgreSQL inside a `transaction()` (it must see the transaction's own
 * writes): the same pages, each one statement with its records. Elsewhere PostgresStore streams
 * the whole scan as one COPY instead (postgres/pg-name-scan.ts: about half the server's CPU; a
 * `readSnapshot`'s on the snapshot it exports).
 */
async function* iterateDomainsByNamePg(
  db: Db,
  pageSize: number,
  opts: ByNameOptions,
): AsyncIterable<DomainWithRecords[]> {
  type Row = { name: string; j: string };
  const read = (after: string | null) =>
    (after === null ? byNameWithRecords(db, opts) : byNameWithRecords(db, opts).where("d.name", ">", after))
      .orderBy("d.name")
      .orderBy("d.id")
      .limit(pageSize)
      .execute() as Promise<Row[]>;
  // The next page is asked for before this one is handed on: the server reads it while the caller
  // works on this one (two pages in memory at most).
  let pending = read(null);
  for (;;) {
    const rows = await pending;
    if (rows.length === 0) return;
    const last = rows[rows.length - 1].name;
    const page = withoutLastName(rows, pageSize);
    if (page.length < rows.length)
      for (const r of await byNameWithRecords(db, opts).where("d.name", "=", last).orderBy("d.id").execute())
        page.push(r as Row);
    pending = read(last);
    // A caller that stops early leaves the read unawaited: its failure is not an unhandled rejection.
    pending.catch(() => {});
    if (page.length > 0) yield fromJsonRows(page);
  }
}
