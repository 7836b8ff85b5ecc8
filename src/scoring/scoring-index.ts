import { isEarlierOrigin } from "./rules/origin-provider.rule.js";
import type { ScoringLists } from "./scoring-lists.js";
import type { BaseSignalsContext, TldOrigin } from "./scoring.types.js";

/**
 * What only the whole index knows: TLD origins, names held more than once, lookalikes. The jobs
 * never hold it for the whole map: `holders` covers the names at hand (a page of domains, read
 * from the store's collision index); the other two are small (ScoringFacts).
 */
export interface ScoringIndex {
  tldOrigins: ReadonlyMap<string, TldOrigin>;
  /** How many domains hold each name (of the names at hand; absent: one). */
  holders: ReadonlyMap<string, number>;
  /** Lookalike name → the different, higher-scored name it imitates. */
  imitated: ReadonlyMap<string, string>;
}

/**
 * The part of the index a scoring pass keeps in memory: one entry per TLD and one per imitating
 * name (groups of equal skeletons are rare), not one per name.
 */
export type ScoringFacts = Pick<ScoringIndex, "tldOrigins" | "imitated">;

export const EMPTY_INDEX: ScoringIndex = { tldOrigins: new Map(), holders: new Map(), imitated: new Map() };

/** The full context of the base rules: the operator's lists plus the index lookups. */
export function scoringContext(
  lists: ScoringLists,
  index: ScoringFacts & Partial<ScoringIndex> = EMPTY_INDEX,
): BaseSignalsContext {
  return {
    ...lists,
    tldOrigin: (tld) => index.tldOrigins.get(tld) ?? null,
    holders: (name) => index.holders?.get(name) ?? 1,
    imitated: (name) => index.imitated.get(name) ?? null,
  };
}

/** Each TLD's origin: of its namespaces' first registrations, the earliest (isEarlierOrigin). */
export function earliestTldOrigins(firsts: Iterable<TldOrigin & { tld: string }>): Map<string, TldOrigin> {
  const out = new Map<string, TldOrigin>();
  for (const { tld, ...o } of firsts) {
    const known = out.get(tld);
    if (!known || isEarlierOrigin(o, known)) out.set(tld, o);
  }
  return out;
}
