import { type Kysely, sql } from "kysely";
import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import type { KycImportResult, TldFirstRegistration } from "../scoring-data.port.js";
import type { DomainWithRecords } from "../../domain/types.js";
import { type Db, type DomainRow, MAX_IN, pagesById, toDomain } from "./rows.js";

/* The scoring jobs' queries (scoring-data.port.ts), shared by both backends. */

/** The table of migration 0004: owner addresses that passed the operator's KYC. */
interface KycDatabase {
  kyc_addresses: { address: string; source: string; imported_at: number };
}

function kycDb(db: Db): Kysely<KycDatabase> {
  return db as unknown as Kysely<KycDatabase>;
}

export async function listTldFirstRegistrations(db: Db): Promise<TldFirstRegistration[]> {
  // One row per (TLD, namespace, network), kept by triggers on domains (migration 0010): no scan.
  const rows = await db
    .selectFrom("tld_registrations")
    .select(["tld", "provider", "network", "first_registered_at as first"])
    .execute();
  return rows.map((r) => ({
    tld: r.tld,
    provider: r.provider as Provider,
    network: r.network as Network,
    firstRegisteredAt: r.first === null ? null : Number(r.first),
  }));
}

export async function findSharedNames(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("domains")
    .select(["name", (eb) => eb.fn.countAll().as("n")])
    .groupBy("name")
    .having((eb) => eb.fn.countAll(), ">", 1)
    .execute();
  return new Map(rows.map((r) => [r.name, Number(r.n)]));
}

export async function findNamesOnPairs(
  db: Db,
  pairs: ReadonlyArray<{ provider: Provider; network: Network }>,
  expiredBy: number | null,
  page?: { after: string | null; limit: number },
): Promise<string[]> {
  if (pairs.length === 0 && expiredBy === null) return [];
  let q = db
    .selectFrom("domains")
    .select("name")
    .distinct()
    .where((eb) =>
      eb.or([
        ...pairs.map((p) => eb.and([eb("provider", "=", p.provider), eb("network", "=", p.network)])),
        ...(expiredBy === null ? [] : [eb("expires_at", "<=", expiredBy)]),
      ]),
    );
  if (page?.after != null) q = q.where("name", ">", page.after);
  const ordered = q.orderBy("name");
  const rows = await (page ? ordered.limit(page.limit) : ordered).execute();
  return rows.map((r) => r.name);
}

export async function findRankingCandidates(db: Db, names: readonly string[]): Promise<DomainWithRecords[]> {
  const out: DomainWithRecords[] = [];
  for (let i = 0; i < names.length; i += MAX_IN) {
    const chunk = names.slice(i, i + MAX_IN).filter((n) => !n.includes("\u0000"));
    if (chunk.length === 0) continue;
    const rows = await db
      .selectFrom("domains")
      .selectAll()
      .where("name", "in", chunk)
      .orderBy("id")
      .execute();
    for (const r of rows) out.push({ ...toDomain(r as DomainRow), records: [] });
  }
  return out;
}

export async function* iterateDomainNames(db: Db, pageSize = 5000): AsyncIterable<string[]> {
  const pages = pagesById(
    (after, limit) =>
      db
        .selectFrom("domains")
        .select(["id", "name"])
        .where("id", ">", after)
        .orderBy("id")
        .limit(limit)
        .execute(),
    pageSize,
  );
  for await (const rows of pages) yield rows.map((r) => r.name);
}

export async function findDomainIdsByOwners(db: Db, owners: readonly string[]): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < owners.length; i += MAX_IN) {
    const rows = await db
      .selectFrom("domains")
      .select("id")
      .where("owner", "in", owners.slice(i, i + MAX_IN))
      .execute();
    for (const r of rows) ids.push(Number(r.id));
  }
  return ids;
}

export async function findKycOwners(db: Db): Promise<Set<string>> {
  const rows = await kycDb(db).selectFrom("kyc_addresses").select("address").execute();
  return new Set(rows.map((r) => r.address));
}

/** Runs inside a transaction (the scoring part of kysely-parts.ts opens it). */
export async function importKycAddresses(
  trx: Db,
  addresses: readonly string[],
  opts: { replace?: boolean; source?: string; now?: number } = {},
): Promise<KycImportResult> {
  const now = opts.now ?? Date.now();
  const db = kycDb(trx);
  const before = await findKycOwners(trx);
  const wanted = new Set(addresses);
  const added = [...wanted].filter((a) => !before.has(a));
  const removed = opts.replace ? [...before].filter((a) => !wanted.has(a)) : [];
  for (let i = 0; i < added.length; i += MAX_IN) {
    const rows = added
      .slice(i, i + MAX_IN)
      .map((address) => ({ address, source: opts.source ?? "", imported_at: now }));
    await db
      .insertInto("kyc_addresses")
      .values(rows)
      .onConflict((oc) => oc.column("address").doNothing())
      .execute();
  }
  for (let i = 0; i < removed.length; i += MAX_IN) {
    await db
      .deleteFrom("kyc_addresses")
      .where("address", "in", removed.slice(i, i + MAX_IN))
      .execute();
  }
  return { added, removed, total: before.size + added.length - removed.length };
}

/** The index of migration 0009: one row per distinct name, kept by triggers on domains. */
interface NameIndexDatabase {
  name_holders: { name: string; holders: number | string; skeleton: string | null };
}

function nameDb(db: Db): Kysely<NameIndexDatabase> {
  return db as unknown as Kysely<NameIndexDatabase>;
}

export async function findNameHolders(db: Db, names: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const unique = [...new Set(names)].filter((n) => !n.includes("\u0000"));
  for (let i = 0; i < unique.length; i += MAX_IN) {
    const rows = await nameDb(db)
      .selectFrom("name_holders")
      .select(["name", "holders"])
      .where("name", "in", unique.slice(i, i + MAX_IN))
      .execute();
    for (const r of rows) out.set(r.name, Number(r.holders));
  }
  return out;
}

export async function* iterateSharedNames(
  db: Db,
  pageSize = 5000,
  startAfter: string | null = null,
): AsyncIterable<string[]> {
  let after: string | null = startAfter;
  for (;;) {
    let q = nameDb(db).selectFrom("name_holders").select("name").where("holders", ">", 1);
    if (after !== null) q = q.where("name", ">", after);
    const rows = await q.orderBy("name").limit(pageSize).execute();
    if (rows.length === 0) return;
    after = rows[rows.length - 1].name;
    yield rows.map((r) => r.name);
  }
}

export async function countSharedNames(db: Db): Promise<number> {
  const r = await nameDb(db)
    .selectFrom("name_holders")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("holders", ">", 1)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function findNamesWithoutSkeleton(db: Db, limit: number): Promise<string[]> {
  const rows = await nameDb(db)
    .selectFrom("name_holders")
    .select("name")
    .where("skeleton", "is", null)
    .limit(limit)
    .execute();
  return rows.map((r) => r.name);
}

/** Runs inside a transaction (the scoring part of kysely-parts.ts opens it). One statement per 250 names. */
export async function setNameSkeletons(
  trx: Db,
  rows: ReadonlyArray<{ name: string; skeleton: string }>,
): Promise<void> {
  for (let i = 0; i < rows.length; i += MAX_IN / 2) {
    const values = sql.join(rows.slice(i, i + MAX_IN / 2).map((r) => sql`(${r.name}, ${r.skeleton})`));
    // Both backends name a VALUES list's columns column1, column2…
    await sql`update name_holders set skeleton = v.column2 from (values ${values}) as v
      where name_holders.name = v.column1`.execute(trx);
  }
}

export async function* iterateLookalikeGroups(db: Db, pageSize = 500): AsyncIterable<string[][]> {
  let after: string | null = null;
  for (;;) {
    let q = nameDb(db).selectFrom("name_holders").select("skeleton").where("skeleton", "is not", null);
    if (after !== null) q = q.where("skeleton", ">", after);
    const skeletons = (
      await q
        .groupBy("skeleton")
        .having((eb) => eb.fn.countAll(), ">", 1)
        .orderBy("skeleton")
        .limit(pageSize)
        .execute()
    ).map((r) => r.skeleton as string);
    if (skeletons.length === 0) return;
    after = skeletons[skeletons.length - 1];
    const groups = new Map<string, string[]>();
    for (let i = 0; i < skeletons.length; i += MAX_IN) {
      const rows = await nameDb(db)
        .selectFrom("name_holders")
        .select(["skeleton", "name"])
        .where("skeleton", "in", skeletons.slice(i, i + MAX_IN))
        .orderBy("skeleton")
        .orderBy("name")
        .execute();
      for (const r of rows) {
        const g = groups.get(r.skeleton as string);
        if (g) g.push(r.name);
        else groups.set(r.skeleton as string, [r.name]);
      }
    }
    yield [...groups.values()];
  }
}
