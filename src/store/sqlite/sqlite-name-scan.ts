import type BetterSqlite3 from "better-sqlite3";
import type { DomainWithRecords } from "../../domain/types.js";
import {
  type ByNameOptions,
  DOMAIN_READ_COLUMNS,
  recordKeyCondition,
  toDomainWithRecords,
  withoutLastName,
} from "../kysely/domain-map-scans.queries.js";

/**
 * A domain's columns, then its records as one JSON array ([key, value, native_key, native_value],
 * in key order: the records' primary key), read in one statement: no second query, no join row
 * that repeats the domain's columns for each record (a join of 6 records a domain cost 2.7 times
 * the CPU of this).
 */
export const selectWithRecords = (
  opts: ByNameOptions,
) => `select ${DOMAIN_READ_COLUMNS.map((c) => `d.${c}`).join(", ")},
  (select json_group_array(json_array(r.key, r.value, r.native_key, r.native_value) order by r.key)
    from records r where r.domain_id = d.id${recordKeyCondition(opts.recordKeys, "sqlite")}) as recs
  from domains d`;

/** A row of `selectWithRecords` (read `raw`) as a domain with its records. */
export const fromRow = (a: unknown[]) =>
  toDomainWithRecords(a, JSON.parse(a[DOMAIN_READ_COLUMNS.length] as string));

/**
 * The map in name then id order, in pages of whole names (the zone export's scan,
 * domain-map.port.ts `iterateDomainsByName`), as prepared statements on `reader`. Keyset paging by
 * name: a page is one short statement, so the connection is free between pages (a live lookup may
 * use it) and no read transaction is held over the whole pass; rows written meanwhile never shift
 * a page. Each page is consistent (one statement); the whole pass is not one snapshot.
 */
export function* scanDomainsByName(
  reader: BetterSqlite3.Database,
  pageSize = 1000,
  opts: ByNameOptions = {},
): Generator<DomainWithRecords[]> {
  const SELECT = selectWithRecords(opts);
  // Rows as arrays (`raw`), made domains here: better-sqlite3's row objects, then converted,
  // cost ~2.5 µs more of CPU a domain (15 % of the export's).
  const first = reader.prepare(`${SELECT} order by d.name, d.id limit ?`).raw(true);
  const next = reader.prepare(`${SELECT} where d.name > ? order by d.name, d.id limit ?`).raw(true);
  const whole = reader.prepare(`${SELECT} where d.name = ? order by d.id`).raw(true);
  let after: string | null = null;
  for (;;) {
    const rows: DomainWithRecords[] = (
      (after === null ? first.all(pageSize) : next.all(after, pageSize)) as unknown[][]
    ).map(fromRow);
    if (rows.length === 0) return;
    after = rows[rows.length - 1].name;
    const page = withoutLastName(rows, pageSize);
    if (page.length < rows.length) for (const a of whole.all(after) as unknown[][]) page.push(fromRow(a));
    if (page.length > 0) yield page;
  }
}
