import type { Kysely } from "kysely";
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
): Promise<string[]> {
  if (pairs.length === 0 && expiredBy === null) return [];
  const rows = await db
    .selectFrom("domains")
    .select("name")
    .distinct()
    .where((eb) =>
      eb.or([
        ...pairs.map((p) => eb.and([eb("provider", "=", p.provider), eb("network", "=", p.network)])),
        ...(expiredBy === null ? [] : [eb("expires_at", "<=", expiredBy)]),
      ]),
    )
    .orderBy("name")
    .execute();
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

/** Runs inside a transaction (KyselyStore.importKycAddresses opens it). */
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
