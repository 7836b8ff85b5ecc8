import type { Kysely, Selectable } from "kysely";
import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import type { Domain, DomainRecord, DomainWithRecords, DomainWrite } from "../../domain/types.js";
import type { ApiKey, KeyScopes, Project } from "../accounts.port.js";
import type { Checkpoint, JournalEntry } from "../crawler-log.port.js";
import type { Database, DomainsTable, RecordsTable } from "../schema.js";
import { reverseLabels } from "./reversed-name.js";

/** The query builder every part's queries run on (a connection or an open transaction). */
export type Db = Kysely<Database>;

/** The columns of a domain row a writer sets, in the order of every bulk statement (all but id). */
export const DOMAIN_COLUMNS = [
  "provider",
  "network",
  "token_id",
  "name",
  "rname",
  "sld",
  "tld",
  "owner",
  "contract_address",
  "resolver",
  "registered_at",
  "registered_block",
  "expires_at",
  "last_update_block",
  "last_update_at",
  "base_score",
  "spam",
  "csam_ok",
  "kyc",
  "tags",
] as const satisfies ReadonlyArray<keyof Omit<DomainsTable, "id">>;
/**
 * The PostgreSQL type of each domain column: the casts of the crawler's upserts (JSON columns)
 * and the snapshot import's staging table are declared from it.
 */
export const PG_DOMAIN_TYPES: Record<(typeof DOMAIN_COLUMNS)[number], "text" | "bigint" | "integer"> = {
  provider: "text",
  network: "text",
  token_id: "text",
  name: "text",
  rname: "text",
  sld: "text",
  tld: "text",
  owner: "text",
  contract_address: "text",
  resolver: "text",
  registered_at: "bigint",
  registered_block: "bigint",
  expires_at: "bigint",
  last_update_block: "bigint",
  last_update_at: "bigint",
  base_score: "integer",
  spam: "integer",
  csam_ok: "integer",
  kyc: "integer",
  tags: "text",
};
/** The columns naming a domain: (network, provider, token id) is unique. */
export const KEY_COLUMNS: ReadonlySet<string> = new Set(["provider", "network", "token_id"]);

export type DomainRow = { [K in keyof DomainsTable]: K extends "id" ? number : DomainsTable[K] };

/** Most values bound in one `in (…)` list: under SQLite's and PostgreSQL's parameter limits. */
export const MAX_IN = 500;

export function toDomain(r: DomainRow): Domain {
  return {
    id: Number(r.id),
    provider: r.provider as Provider,
    network: r.network as Network,
    tokenId: r.token_id,
    name: r.name,
    sld: r.sld,
    tld: r.tld,
    owner: r.owner,
    contractAddress: r.contract_address,
    resolver: r.resolver,
    registeredAt: r.registered_at === null ? null : Number(r.registered_at),
    registeredBlock: r.registered_block === null ? null : Number(r.registered_block),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    lastUpdateBlock: Number(r.last_update_block),
    lastUpdateAt: Number(r.last_update_at),
    baseScore: Number(r.base_score),
    spam: Boolean(r.spam),
    csamOk: Boolean(r.csam_ok),
    kyc: Boolean(r.kyc),
    // Most domains have no tag: no JSON.parse for those.
    tags: r.tags === "[]" ? [] : (JSON.parse(r.tags) as string[]),
  };
}

export function toRecord(
  r: Pick<RecordsTable, "key" | "value" | "native_key" | "native_value">,
): DomainRecord {
  return { key: r.key, value: r.value, nativeKey: r.native_key, nativeValue: r.native_value };
}

/** The row of a domain write (also the SQLite bulk path's, sqlite/sqlite-bulk-writes.ts). */
export function domainColumns(d: DomainWrite): Omit<DomainsTable, "id"> {
  return {
    provider: d.provider,
    network: d.network,
    token_id: d.tokenId,
    name: safeText(d.name),
    rname: reverseLabels(safeText(d.name)),
    sld: safeText(d.sld),
    tld: safeText(d.tld),
    owner: d.owner,
    contract_address: d.contractAddress,
    resolver: d.resolver,
    registered_at: d.registeredAt,
    registered_block: d.registeredBlock,
    expires_at: d.expiresAt,
    last_update_block: d.lastUpdateBlock,
    last_update_at: d.lastUpdateAt,
    base_score: d.baseScore,
    spam: d.spam ? 1 : 0,
    csam_ok: d.csamOk ? 1 : 0,
    kyc: d.kyc ? 1 : 0,
    tags: JSON.stringify(d.tags),
  };
}

export function toCheckpoint(r: Database["checkpoints"]): Checkpoint {
  return {
    sourceId: r.source_id,
    chainId: Number(r.chain_id),
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    updatedAt: Number(r.updated_at),
    state: r.state,
    error: r.error,
  };
}

export function toJournal(r: Selectable<Omit<Database["journal"], "id">>): JournalEntry {
  return {
    sourceId: r.source_id,
    chainId: Number(r.chain_id),
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    logIndex: Number(r.log_index),
    txHash: r.tx_hash,
    contract: r.contract,
    tokenId: r.token_id,
    event: r.event,
    blockTime: r.block_time === null || r.block_time === undefined ? null : Number(r.block_time),
  };
}

export function toProject(r: {
  id: number;
  name: string;
  description: string;
  plan: string;
  created_at: number;
  settings: string;
}): Project {
  return {
    id: Number(r.id),
    name: r.name,
    description: r.description,
    plan: r.plan,
    createdAt: Number(r.created_at),
    settings: JSON.parse(r.settings) as Record<string, unknown>,
  };
}

export function toApiKey(r: {
  id: number;
  project_id: number;
  name: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  scopes?: string | null;
  expires_at?: number | null;
  rotated_to?: number | null;
}): ApiKey {
  return {
    id: Number(r.id),
    projectId: Number(r.project_id),
    name: r.name,
    prefix: r.prefix,
    createdAt: Number(r.created_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    scopes: parseScopesColumn(r.scopes ?? null),
    expiresAt: r.expires_at == null ? null : Number(r.expires_at),
    rotatedTo: r.rotated_to == null ? null : Number(r.rotated_to),
  };
}

/** The scopes column: JSON of the lists set, null when the key may use everything. */
export function scopesColumn(scopes: KeyScopes | undefined): string | null {
  if (scopes === undefined) return null;
  const out: KeyScopes = {};
  if (scopes.endpoints) out.endpoints = scopes.endpoints;
  if (scopes.networks) out.networks = scopes.networks;
  if (scopes.providers) out.providers = scopes.providers;
  return Object.keys(out).length === 0 ? null : JSON.stringify(out);
}

/** Written by scopesColumn only; a value that does not parse grants nothing rather than everything. */
function parseScopesColumn(v: string | null): KeyScopes {
  if (v === null) return {};
  try {
    const o = JSON.parse(v) as Record<string, unknown>;
    const lists: KeyScopes = {};
    for (const k of ["endpoints", "networks", "providers"] as const) {
      const l = o[k];
      if (l === undefined) continue;
      lists[k] = Array.isArray(l) ? l.filter((x): x is string => typeof x === "string") : [];
    }
    return lists;
  } catch {
    return { endpoints: [] };
  }
}

/** Groups record rows under their domains, keeping the domains' order and the records' key order. */
export function attachRecords(domains: Domain[], rows: Array<RecordsTable>): DomainWithRecords[] {
  const byId = new Map<number, DomainRecord[]>();
  for (const d of domains) byId.set(d.id, []);
  for (const r of rows) byId.get(Number(r.domain_id))?.push(toRecord(r));
  return domains.map((d) => ({ ...d, records: byId.get(d.id) ?? [] }));
}

/**
 * PostgreSQL text cannot hold NUL, and chain data is attacker-controlled: a NUL in a name or
 * record is stored as U+FFFD on both backends, so they stay identical.
 */
export function safeText(s: string): string {
  return s.includes("\u0000") ? s.replaceAll("\u0000", "\ufffd") : s;
}

/**
 * Reads a table in pages in the order of its `id` (keyset paging: each page starts after the last
 * id of the one before, so rows written meanwhile never shift a page). `page(after, limit)` runs
 * the query of one page.
 */
export async function* pagesById<R extends { id: number | string | bigint }>(
  page: (after: number, limit: number) => Promise<R[]>,
  pageSize: number,
): AsyncIterable<R[]> {
  let after = 0;
  for (;;) {
    const rows = await page(after, pageSize);
    if (rows.length === 0) return;
    after = Number(rows[rows.length - 1].id);
    yield rows;
  }
}
