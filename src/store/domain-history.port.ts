import type { AtPoint, Provenance } from "../domain/history.js";
import type { Domain, DomainFilter } from "../domain/types.js";
import type { DomainMap } from "./domain-map.port.js";

/** The reads resolution makes of the map: the store's, or the map as it was at a point in time. */
export type MapView = Pick<
  DomainMap,
  "findDomainsByName" | "findDomainsByOwner" | "findReverse" | "findDomainById" | "findRecords"
>;

/** The map at a point, and the time of that point (epoch ms) that rankings judge expiry and age at. */
export interface HistoryView {
  view: MapView;
  time: number;
}

/**
 * The map's history, rebuilt from the crawler's journal (crawler/domain-history.ts): time travel
 * and provenance for resolution. Domains of a view have ids of their own (the current id of the
 * token when it still exists, a negative one otherwise), valid within the view.
 *
 * @example
 * const { view } = await history.viewAt({ kind: "block", network: "POLYGON", block: 120 }, {}, Date.now());
 * const [alice] = await view.findDomainsByName(["alice.wallet"], {});
 * const p = await history.provenanceOf([alice], { kind: "block", network: "POLYGON", block: 120 }, Date.now());
 */
export interface DomainHistory {
  /**
   * The map as it was at `at`, for the sources `filter` covers. Throws AT_BEFORE_INDEX when `at`
   * is before a covered source's first indexed block, AT_AFTER_INDEX when it is in the future or
   * past the last indexed block of the network.
   */
  viewAt(at: AtPoint, filter: DomainFilter, now: number): Promise<HistoryView>;
  /** Provenance of each domain (same order), from the journal up to `at` (null: all of it). */
  provenanceOf(domains: readonly Domain[], at: AtPoint | null, now: number): Promise<Provenance[]>;
}
