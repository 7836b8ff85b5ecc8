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

/** A reverse record to set (`domainId`) or to remove (null). */
export type ReverseChange = Omit<ReverseRecord, "domainId"> & { domainId: number | null };

/**
 * The map: domains, their records and reverse records. Resolution reads it; the crawler, imports
 * and the rescore job write it. Lookups return `null` or `[]` for absence; only the edge turns
 * that into a 404.
 *
 * @example
 * const id = await map.upsertDomain(domain);
 * await map.replaceRecords(id, [{ key: "crypto.ETH.address", value: owner, nativeKey, nativeValue }]);
 * const [alice] = await map.findDomainsByName(["alice.wallet"], { network: "POLYGON" });
 */
export interface DomainMap {
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

  /** `updateDomainSignals` for many domains at once (a rescore page: a round trip per 500). */
  updateDomainSignalsMany(
    rows: ReadonlyArray<{
      id: number;
      signals: Pick<Domain, "baseScore" | "spam" | "csamOk" | "kyc" | "tags">;
    }>,
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
  /**
   * Whether any domain's name lies strictly below `name` (ends with `"." + name`): one index range
   * scan. DNS answers such a name without data of its own NODATA, not NXDOMAIN.
   */
  hasDescendant(name: string): Promise<boolean>;
  /**
   * A number that changes whenever the map may have changed as seen by this process's reads (its
   * own commits, and another process's once the backend hears of them: the read caches' bound), or
   * null when the backend has no such signal. A value derived from reads made while it stays the
   * same is exact (the DNS answer cache keys on it).
   */
  readVersion(): number | null;
  /** Domains owned by `address` (lower case), with their records. */
  findDomainsByOwner(address: string, filter: DomainFilter): Promise<DomainWithRecords[]>;
  /** Domains under a TLD, oldest registration first (provider-origin rule, zone export). */
  findDomainsByTld(tld: string, limit: number): Promise<Domain[]>;

  setReverse(record: ReverseRecord): Promise<void>;
  removeReverse(address: string, network: Network, provider: Provider): Promise<void>;
  /**
   * `setReverse` (a domain id) and `removeReverse` (null) for many addresses at once, the last
   * change of an (address, network, provider) winning: the crawler's reverse records of a range.
   */
  applyReverses(changes: readonly ReverseChange[]): Promise<void>;
  /** Reverse records naming `address` (lower case). */
  findReverse(address: string, filter: DomainFilter): Promise<ReverseRecord[]>;
  /** Every reverse record, in address order (snapshot export). */
  listReverseRecords(): Promise<ReverseRecord[]>;
  /** The reverse records naming any of these domains, in no set order (snapshot export, per page). */
  findReverseByDomainIds(domainIds: number[]): Promise<ReverseRecord[]>;

  countDomains(): Promise<number>;
  /** Every domain with its records, in id order, in pages (snapshot export, zone files). */
  iterateDomains(pageSize?: number): AsyncIterable<DomainWithRecords[]>;
  /**
   * Every domain with its records, in name order (the `domains_name` index's: byte order on
   * SQLite, the column's collation on PostgreSQL), then id, in pages of about `pageSize` that
   * never split a name: all candidates of a name arrive together (zone export).
   *
   * `recordKeys`: only the records whose key starts with one of these prefixes (lower-case
   * letters, digits and dots; e.g. the zone files' `record.`, `content.` …): the rest are not read.
   * `readAhead`: the next pages are read while the caller works on this one (SQLite: on a worker
   * thread; PostgreSQL streams the whole scan as one statement anyway, postgres/pg-name-scan.ts).
   *
   * @example for await (const page of map.iterateDomainsByName(1000)) for (const d of page) d.name
   */
  iterateDomainsByName(
    pageSize?: number,
    opts?: { recordKeys?: readonly string[]; readAhead?: boolean },
  ): AsyncIterable<DomainWithRecords[]>;

  /** Bulk upsert of `upsertDomain`; returns the ids in input order. */
  upsertDomains(domains: DomainWrite[]): Promise<number[]>;
  /** Ids of the domains of these tokens; absent tokens are absent from the map. */
  findDomainIdsByTokens(
    network: Network,
    provider: Provider,
    tokenIds: string[],
  ): Promise<Map<string, number>>;
  /** The domains of these tokens with their records, by token; absent tokens are absent. */
  findDomainsByTokens(
    network: Network,
    provider: Provider,
    tokenIds: string[],
  ): Promise<Map<string, DomainWithRecords>>;
  /** `replaceRecords` for many domains at once. */
  replaceRecordsMany(items: Array<{ domainId: number; records: DomainRecord[] }>): Promise<void>;
}
