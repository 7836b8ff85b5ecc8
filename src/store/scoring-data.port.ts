import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";

/** The earliest registration under a TLD in one namespace (provider on a network). */
export interface TldFirstRegistration {
  tld: string;
  provider: Provider;
  network: Network;
  /** Epoch ms; null when no domain of the namespace under the TLD has a known registration time. */
  firstRegisteredAt: number | null;
}

export interface KycImportResult {
  added: string[];
  removed: string[];
  total: number;
}

/**
 * What the scoring jobs read beyond one domain: facts only the whole map knows (first registration
 * per TLD, names held more than once, every name for lookalike grouping, an owner's domains) and
 * the operator's KYC list. The rescore and KYC import jobs (src/jobs/) use it; the scoring rules
 * themselves never see a store.
 *
 * @example
 * const shared = await store.findSharedNames(); // Map { "alice.wallet" => 2 }
 * for await (const names of store.iterateDomainNames(5000)) groupLookalikes(names);
 * const { added, removed } = await store.importKycAddresses(["0xabc…"], { replace: true });
 */
export interface ScoringData {
  /** Per TLD and namespace, the earliest registration time (provider-origin rule). */
  listTldFirstRegistrations(): Promise<TldFirstRegistration[]>;
  /** Names held by two or more domains, with how many hold each (collision rule). */
  findSharedNames(): Promise<Map<string, number>>;
  /** Every domain's name (one entry per domain), in id order, in pages. */
  iterateDomainNames(pageSize?: number): AsyncIterable<string[]>;
  /** Ids of the domains owned by these addresses (lower case). */
  findDomainIdsByOwners(owners: readonly string[]): Promise<number[]>;

  /** The owner addresses on the KYC list. */
  findKycOwners(): Promise<Set<string>>;
  /**
   * Adds addresses to the KYC list (with `replace`, makes the list exactly these addresses), in one
   * transaction. Returns what changed, so only the affected owners' domains are rescored.
   */
  importKycAddresses(
    addresses: readonly string[],
    opts?: { replace?: boolean; source?: string; now?: number },
  ): Promise<KycImportResult>;
}
