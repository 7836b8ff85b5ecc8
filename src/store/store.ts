import type { Kysely } from "kysely";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type {
  Domain,
  DomainFilter,
  DomainRecord,
  DomainWithRecords,
  DomainWrite,
  ReverseRecord,
} from "../domain/types.js";
import type { Database } from "./schema.js";

export type Dialect = "sqlite" | "postgres";

export interface Checkpoint {
  sourceId: string;
  chainId: number;
  blockNumber: number;
  blockHash: string;
  updatedAt: number;
  state: string;
  error: string | null;
}

export interface JournalEntry {
  sourceId: string;
  chainId: number;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  txHash: string;
  contract: string;
  tokenId: string | null;
  /** JSON of the decoded event. */
  event: string;
  /** Epoch seconds of the block; null or absent when unknown. */
  blockTime?: number | null;
}

/** A recent block as the crawler saw it, kept for reorg detection. */
export interface RecentBlock {
  blockNumber: number;
  blockHash: string;
  parentHash: string;
}

export interface Project {
  id: number;
  name: string;
  description: string;
  plan: string;
  createdAt: number;
  /** Parsed JSON settings (resolution settings and collision rules). */
  settings: Record<string, unknown>;
}

export interface ApiKey {
  id: number;
  projectId: number;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/**
 * The store port: one interface, two real backends (SQLite and PostgreSQL) built on one Kysely
 * query layer. Lookups return `null` or `[]` for absence; only the edge turns that into a 404.
 *
 * @example
 * const store = await createStore({ databaseUrl: undefined, dataDir: "./data" });
 * const [alice] = await store.findDomainsByName(["alice.wallet"], {});
 */
export interface Store {
  readonly dialect: Dialect;
  /** The query builder, for features that own their own tables (accounts, usage, …). */
  readonly db: Kysely<Database>;

  migrate(): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
  /** Runs `fn` in one database transaction; the store passed in writes inside it. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;

  /** Inserts or updates the domain identified by (network, provider, tokenId); returns its id. */
  upsertDomain(domain: DomainWrite): Promise<number>;
  findDomainById(id: number): Promise<Domain | null>;
  findDomainByToken(network: Network, provider: Provider, tokenId: string): Promise<Domain | null>;
  deleteDomain(id: number): Promise<void>;
  /** Updates only the scoring fields of a domain (base score and abuse signals). */
  updateDomainSignals(
    id: number,
    signals: Pick<Domain, "baseScore" | "spam" | "csamOk" | "kyc" | "tags">,
  ): Promise<void>;

  /** Replaces every record of a domain. */
  replaceRecords(domainId: number, records: DomainRecord[]): Promise<void>;
  /** Sets one native record: drops the canonical rows it produced before and writes `mapped`. */
  setNativeRecord(
    domainId: number,
    nativeKey: string,
    nativeValue: string,
    mapped: Array<{ key: string; value: string }>,
  ): Promise<void>;
  findRecords(domainId: number): Promise<DomainRecord[]>;

  /** Domains whose normalized name is one of `names`, with their records. The API's hot path. */
  findDomainsByName(names: string[], filter: DomainFilter): Promise<DomainWithRecords[]>;
  /** Domains owned by `address` (lower case), with their records. */
  findDomainsByOwner(address: string, filter: DomainFilter): Promise<DomainWithRecords[]>;
  /** Domains under a TLD, oldest registration first (provider-origin rule, zone export). */
  findDomainsByTld(tld: string, limit: number): Promise<Domain[]>;

  setReverse(record: ReverseRecord): Promise<void>;
  removeReverse(address: string, network: Network, provider: Provider): Promise<void>;
  /** Reverse records naming `address` (lower case). */
  findReverse(address: string, filter: DomainFilter): Promise<ReverseRecord[]>;

  countDomains(): Promise<number>;
  /** Every domain with its records, in id order, in pages (snapshot export, zone files). */
  iterateDomains(pageSize?: number): AsyncIterable<DomainWithRecords[]>;

  getCheckpoint(sourceId: string): Promise<Checkpoint | null>;
  listCheckpoints(): Promise<Checkpoint[]>;
  setCheckpoint(checkpoint: Checkpoint): Promise<void>;
  deleteCheckpoint(sourceId: string): Promise<void>;

  /** Appends journal entries; an entry already present (same chain, block hash, log index, token) is skipped. Returns how many were new. */
  appendJournal(entries: JournalEntry[]): Promise<number>;
  /** Journal entries of a source for one token, in chain order. */
  findJournalByToken(sourceId: string, tokenId: string): Promise<JournalEntry[]>;
  /** Journal entries of a source above a block, in chain order. */
  findJournalAfter(sourceId: string, blockNumber: number): Promise<JournalEntry[]>;
  /** Deletes a source's journal entries above a block (reorg rollback); returns how many. */
  deleteJournalAfter(sourceId: string, blockNumber: number): Promise<number>;
  /** Journal entries of a source for many tokens, grouped by token, each group in chain order. */
  findJournalByTokens(sourceId: string, tokenIds: string[]): Promise<JournalEntry[]>;
  /** The distinct tokens (fold keys) of a source's journal entries above a block. */
  findJournalTokensAfter(sourceId: string, blockNumber: number): Promise<string[]>;

  /** Bulk upsert of `upsertDomain`; returns the ids in input order. */
  upsertDomains(domains: DomainWrite[]): Promise<number[]>;
  /** Ids of the domains of these tokens; absent tokens are absent from the map. */
  findDomainIdsByTokens(
    network: Network,
    provider: Provider,
    tokenIds: string[],
  ): Promise<Map<string, number>>;
  /** `replaceRecords` for many domains at once. */
  replaceRecordsMany(items: Array<{ domainId: number; records: DomainRecord[] }>): Promise<void>;

  /** Recent block hashes of a source (reorg detection). */
  putRecentBlocks(sourceId: string, blocks: RecentBlock[]): Promise<void>;
  /** A source's recent blocks at or above `fromBlock`, ascending. */
  findRecentBlocks(sourceId: string, fromBlock: number): Promise<RecentBlock[]>;
  /** Deletes a source's recent blocks above `above` (rollback) and/or below `below` (pruning). */
  deleteRecentBlocks(sourceId: string, range: { above?: number; below?: number }): Promise<void>;

  createProject(input: { name: string; description?: string; plan?: string }): Promise<Project>;
  findProjectById(id: number): Promise<Project | null>;
  findProjectByName(name: string): Promise<Project | null>;
  updateProjectSettings(id: number, settings: Record<string, unknown>): Promise<void>;

  insertApiKey(input: { projectId: number; name: string; prefix: string; hash: string }): Promise<ApiKey>;
  /** The live (not revoked) key with this hash, or null. */
  findApiKeyByHash(hash: string): Promise<ApiKey | null>;
  listApiKeys(projectId: number): Promise<ApiKey[]>;
  revokeApiKey(id: number, at: number): Promise<void>;
  touchApiKeys(lastUsed: Map<number, number>): Promise<void>;
}
