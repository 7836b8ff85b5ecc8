import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { DomainWithRecords } from "../domain/types.js";

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
 * per TLD, names held more than once, lookalike groups: read from indexes kept on every write, in
 * pages, so that memory does not grow with the map; an owner's domains) and
 * the operator's KYC list. The rescore and KYC import jobs (src/jobs/) use it; the scoring rules
 * themselves never see a store.
 *
 * @example
 * const holders = await store.scoring.findNameHolders(["alice.wallet"]); // Map { "alice.wallet" => 2 }
 * for await (const groups of store.scoring.iterateLookalikeGroups(500)) rankLookalikes(groups);
 * const { added, removed } = await store.scoring.importKycAddresses(["0xabc…"], { replace: true });
 */
export interface ScoringData {
  /** Per TLD and namespace, the earliest registration time (provider-origin rule). */
  listTldFirstRegistrations(): Promise<TldFirstRegistration[]>;
  /**
   * Names held by two or more domains, with how many hold each, grouped from scratch over every
   * domain: a whole-map Map, for checks of the collision index. The jobs read the index instead
   * (findNameHolders, iterateSharedNames).
   */
  findSharedNames(): Promise<Map<string, number>>;
  /**
   * From the collision index (name_holders, kept by triggers on every write): how many domains
   * hold each of these names. A name no domain holds is absent.
   */
  findNameHolders(names: readonly string[]): Promise<Map<string, number>>;
  /**
   * From the collision index: the names held by two or more domains, in name order (the store's),
   * in pages; after `startAfter` when it is given (a keyset to resume from).
   */
  iterateSharedNames(pageSize?: number, startAfter?: string | null): AsyncIterable<string[]>;
  /** From the collision index: how many names two or more domains hold. */
  countSharedNames(): Promise<number>;
  /**
   * Up to `limit` indexed names whose TR39 skeleton is not stored yet (the skeleton is computed in
   * JS, scoring/skeleton.ts; the scoring jobs fill them with setNameSkeletons before grouping).
   */
  findNamesWithoutSkeleton(limit: number): Promise<string[]>;
  /** Stores the skeletons of indexed names (one transaction). */
  setNameSkeletons(rows: ReadonlyArray<{ name: string; skeleton: string }>): Promise<void>;
  /**
   * The lookalike groups: names sharing a stored skeleton, two or more a group, in pages of
   * `pageSize` groups (skeleton order; names in code-point order within a group).
   */
  iterateLookalikeGroups(pageSize?: number): AsyncIterable<string[][]>;
  /**
   * Distinct names (sorted) of the domains on one of these (provider, network) pairs, or expired
   * at `expiredBy` (expires_at <= expiredBy) when it is given: the names a change of enabled
   * networks/providers or of includeExpired can affect (the settings dry run). With `page`: at
   * most `limit` of them, after `after` in the store's name order (a keyset page).
   */
  findNamesOnPairs(
    pairs: ReadonlyArray<{ provider: Provider; network: Network }>,
    expiredBy: number | null,
    page?: { after: string | null; limit: number },
  ): Promise<string[]>;
  /**
   * The domains of these names without their records (`records: []`), in id order: what the
   * ranker needs to order them without explaining (the settings dry run). Id order within each
   * batch of 500 names; all domains of one name are in the same batch.
   */
  findRankingCandidates(names: readonly string[]): Promise<DomainWithRecords[]>;
  /** Every domain's name (one entry per domain), in id order, in pages. */
  iterateDomainNames(pageSize?: number): AsyncIterable<string[]>;
  /** Ids of the domains owned by these addresses (lower case). */
  findDomainIdsByOwners(owners: readonly string[]): Promise<number[]>;

  /**
   * Up to `limit` names (in name order) whose holder count crossed one ↔ several since the
   * rescoring job last scored them, with the version it must record (markNamesScored).
   */
  findUnscoredNames(limit: number): Promise<UnscoredName[]>;
  /** Records that these names were scored at these versions (a name changed since stays unscored). */
  markNamesScored(rows: readonly UnscoredName[]): Promise<void>;
  /** A value the rescoring job keeps between passes and restarts (`null` when never set). */
  findScoringState(key: string): Promise<string | null>;
  setScoringState(key: string, value: string): Promise<void>;

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

/** A name the rescoring job must score again, and the version of its holder count it scores. */
export interface UnscoredName {
  name: string;
  version: number;
}
