import type { DomainWithRecords, ReverseRecord } from "../../domain/types.js";
import { toReverse, withRecords } from "./domain-map.queries.js";
import { type Db, type DomainRow, MAX_IN, pagesById, toDomain } from "./rows.js";

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

export async function* iterateDomainsByName(db: Db, pageSize = 1000): AsyncIterable<DomainWithRecords[]> {
  const byName = () => db.selectFrom("domains").selectAll();
  let after: string | null = null;
  for (;;) {
    const from: string | null = after;
    const q = from === null ? byName() : byName().where("name", ">", from);
    const rows = (await q.orderBy("name").orderBy("id").limit(pageSize).execute()) as DomainRow[];
    if (rows.length === 0) return;
    let page = rows;
    if (rows.length === pageSize) {
      // The page's last name may go on past it: its domains are read whole (one index range), so
      // no name is split. Keyset paging by name: rows written meanwhile never shift a page.
      const last = rows[rows.length - 1].name;
      let first = rows.length - 1;
      while (first > 0 && rows[first - 1].name === last) first--;
      const whole = (await byName().where("name", "=", last).orderBy("id").execute()) as DomainRow[];
      page = [...rows.slice(0, first), ...whole];
    }
    after = rows[rows.length - 1].name;
    if (page.length === 0) continue;
    yield await withRecords(db, page.map(toDomain));
  }
}
