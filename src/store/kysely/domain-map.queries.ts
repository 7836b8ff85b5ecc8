import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import type {
  Domain,
  DomainFilter,
  DomainRecord,
  DomainWithRecords,
  DomainWrite,
  ReverseRecord,
} from "../../domain/types.js";
import type { RecordsTable } from "../schema.js";
import {
  attachRecords,
  type Db,
  type DomainRow,
  domainColumns,
  MAX_IN,
  safeText,
  toDomain,
  toRecord,
} from "./rows.js";
import { descendantRange } from "./reversed-name.js";

/* The map's queries (domain-map.port.ts), shared by both backends; the whole-map scans are in
   domain-map-scans.queries.ts. */

/** A reverse_records row as the port's ReverseRecord. */
export function toReverse(r: {
  network: string;
  provider: string;
  address: string;
  domain_id: number | string;
}): ReverseRecord {
  return {
    network: r.network as Network,
    provider: r.provider as Provider,
    address: r.address,
    domainId: Number(r.domain_id),
  };
}

export async function upsertDomain(db: Db, domain: DomainWrite): Promise<number> {
  const cols = domainColumns(domain);
  const { provider, network, token_id, ...update } = cols;
  const row = await db
    .insertInto("domains")
    .values(cols)
    .onConflict((oc) => oc.columns(["network", "provider", "token_id"]).doUpdateSet(update))
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function findDomainById(db: Db, id: number): Promise<Domain | null> {
  const r = await db.selectFrom("domains").selectAll().where("id", "=", id).executeTakeFirst();
  return r ? toDomain(r as DomainRow) : null;
}

export async function findDomainByToken(
  db: Db,
  network: Network,
  provider: Provider,
  tokenId: string,
): Promise<Domain | null> {
  const r = await db
    .selectFrom("domains")
    .selectAll()
    .where("network", "=", network)
    .where("provider", "=", provider)
    .where("token_id", "=", tokenId)
    .executeTakeFirst();
  return r ? toDomain(r as DomainRow) : null;
}

export async function deleteDomain(db: Db, id: number): Promise<void> {
  await db.deleteFrom("records").where("domain_id", "=", id).execute();
  await db.deleteFrom("reverse_records").where("domain_id", "=", id).execute();
  await db.deleteFrom("domains").where("id", "=", id).execute();
}

export async function updateDomainSignals(
  db: Db,
  id: number,
  s: Pick<Domain, "baseScore" | "spam" | "csamOk" | "kyc" | "tags">,
): Promise<void> {
  await db
    .updateTable("domains")
    .set({
      base_score: s.baseScore,
      spam: s.spam ? 1 : 0,
      csam_ok: s.csamOk ? 1 : 0,
      kyc: s.kyc ? 1 : 0,
      tags: JSON.stringify(s.tags),
    })
    .where("id", "=", id)
    .execute();
}

export async function replaceRecords(db: Db, domainId: number, records: DomainRecord[]): Promise<void> {
  await db.deleteFrom("records").where("domain_id", "=", domainId).execute();
  const unique = new Map(records.map((r) => [safeText(r.key), r]));
  const rows = [...unique.values()].map((r) => ({
    domain_id: domainId,
    key: safeText(r.key),
    value: safeText(r.value),
    native_key: safeText(r.nativeKey),
    native_value: safeText(r.nativeValue),
  }));
  for (let i = 0; i < rows.length; i += 100) {
    await db
      .insertInto("records")
      .values(rows.slice(i, i + 100))
      .execute();
  }
}

export async function setNativeRecord(
  db: Db,
  domainId: number,
  nativeKey: string,
  nativeValue: string,
  mapped: Array<{ key: string; value: string }>,
): Promise<void> {
  await db
    .deleteFrom("records")
    .where("domain_id", "=", domainId)
    .where("native_key", "=", safeText(nativeKey))
    .execute();
  if (nativeValue === "" || mapped.length === 0) return;
  const rows = mapped.map((m) => ({
    domain_id: domainId,
    key: safeText(m.key),
    value: safeText(m.value),
    native_key: safeText(nativeKey),
    native_value: safeText(nativeValue),
  }));
  // Two native keys may map to the same canonical key (e.g. UNS ipfs.html.value and dweb.ipfs.hash):
  // the one set last wins, as it would on chain.
  await db
    .insertInto("records")
    .values(rows)
    .onConflict((oc) =>
      oc.columns(["domain_id", "key"]).doUpdateSet((eb) => ({
        value: eb.ref("excluded.value"),
        native_key: eb.ref("excluded.native_key"),
        native_value: eb.ref("excluded.native_value"),
      })),
    )
    .execute();
}

export async function findRecords(db: Db, domainId: number): Promise<DomainRecord[]> {
  const rows = await db
    .selectFrom("records")
    .selectAll()
    .where("domain_id", "=", domainId)
    .orderBy("key")
    .execute();
  return rows.map(toRecord);
}

export async function withRecords(db: Db, domains: Domain[]): Promise<DomainWithRecords[]> {
  if (domains.length === 0) return [];
  const rows: RecordsTable[] = [];
  for (let i = 0; i < domains.length; i += MAX_IN) {
    const ids = domains.slice(i, i + MAX_IN).map((d) => d.id);
    rows.push(
      ...(await db
        .selectFrom("records")
        .selectAll()
        .where("domain_id", "in", ids)
        .orderBy("domain_id")
        .orderBy("key")
        .execute()),
    );
  }
  return attachRecords(domains, rows);
}

/** A domain's columns and one of its records' (nulls when it has none): a row of `joinedRecords`. */
type JoinedRow = DomainRow & {
  r_key: string | null;
  r_value: string | null;
  r_native_key: string | null;
  r_native_value: string | null;
};

/** Whole `domains` rows, aliased `d`: the query `joinedRecords` narrows. */
function domainsAsD(db: Db) {
  return db.selectFrom("domains as d").selectAll("d");
}

/**
 * The domains of `domains` (a query of whole `domains` rows, aliased `d`) with their records in one
 * statement: one row a record (a domain without one comes once, with nulls), in id then key order,
 * folded back into domains here: one round trip to PostgreSQL where the domains then `withRecords`
 * take two. (Measured at 10,000,000 domains: a cold lookup's time is the page reads, not the round
 * trips; bench/HISTORY.md, "Scale".) `limit` caps the domains, not the rows.
 */
async function joinedRecords(
  db: Db,
  where: (q: ReturnType<typeof domainsAsD>) => ReturnType<typeof domainsAsD>,
  limit?: number,
): Promise<DomainWithRecords[]> {
  let inner = where(domainsAsD(db));
  if (limit !== undefined) inner = inner.orderBy("d.id").limit(limit);
  const rows = (await db
    .selectFrom(inner.as("d"))
    .leftJoin("records as r", "r.domain_id", "d.id")
    .selectAll("d")
    .select([
      "r.key as r_key",
      "r.value as r_value",
      "r.native_key as r_native_key",
      "r.native_value as r_native_value",
    ])
    .orderBy("d.id")
    .orderBy("r.key")
    .execute()) as JoinedRow[];
  const out: DomainWithRecords[] = [];
  let last: DomainWithRecords | null = null;
  for (const row of rows) {
    if (last === null || last.id !== Number(row.id)) {
      last = { ...toDomain(row), records: [] };
      out.push(last);
    }
    if (row.r_key !== null)
      last.records.push({
        key: row.r_key,
        value: row.r_value as string,
        nativeKey: row.r_native_key as string,
        nativeValue: row.r_native_value as string,
      });
  }
  return out;
}

/** Narrows a `domainsAsD` query to the filter's network and provider. */
function filtered(q: ReturnType<typeof domainsAsD>, filter: DomainFilter) {
  let out = q;
  if (filter.network) out = out.where("d.network", "=", filter.network);
  if (filter.provider) out = out.where("d.provider", "=", filter.provider);
  return out;
}

export async function findDomainsByName(
  db: Db,
  names: string[],
  filter: DomainFilter,
): Promise<DomainWithRecords[]> {
  const clean = [...new Set(names.filter((n) => !n.includes("\u0000")))];
  const out: DomainWithRecords[] = [];
  for (let i = 0; i < clean.length; i += MAX_IN) {
    const part = clean.slice(i, i + MAX_IN);
    out.push(...(await joinedRecords(db, (q) => filtered(q.where("d.name", "in", part), filter))));
  }
  return clean.length > MAX_IN ? out.sort((a, b) => a.id - b.id) : out;
}

export function findDomainsByOwner(
  db: Db,
  address: string,
  filter: DomainFilter,
): Promise<DomainWithRecords[]> {
  return joinedRecords(db, (q) => filtered(q.where("d.owner", "=", address), filter), 10_000);
}

export async function findDomainsByTld(db: Db, tld: string, limit: number): Promise<Domain[]> {
  const rows = await db
    .selectFrom("domains")
    .selectAll()
    .where("tld", "=", tld)
    .orderBy("registered_at")
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => toDomain(r as DomainRow));
}

export async function setReverse(db: Db, r: ReverseRecord): Promise<void> {
  await db
    .insertInto("reverse_records")
    .values({ network: r.network, provider: r.provider, address: r.address, domain_id: r.domainId })
    .onConflict((oc) => oc.columns(["address", "network", "provider"]).doUpdateSet({ domain_id: r.domainId }))
    .execute();
}

export async function removeReverse(
  db: Db,
  address: string,
  network: Network,
  provider: Provider,
): Promise<void> {
  await db
    .deleteFrom("reverse_records")
    .where("address", "=", address)
    .where("network", "=", network)
    .where("provider", "=", provider)
    .execute();
}

export async function findReverse(db: Db, address: string, filter: DomainFilter): Promise<ReverseRecord[]> {
  let q = db.selectFrom("reverse_records").selectAll().where("address", "=", address);
  if (filter.network) q = q.where("network", "=", filter.network);
  if (filter.provider) q = q.where("provider", "=", filter.provider);
  const rows = await q.execute();
  return rows.map(toReverse);
}

export async function hasDescendant(db: Db, name: string): Promise<boolean> {
  const { above, below } = descendantRange(name);
  const r = await db
    .selectFrom("domains")
    .select("id")
    .where("rname", ">", above)
    .where("rname", "<", below)
    .limit(1)
    .executeTakeFirst();
  return r !== undefined;
}
