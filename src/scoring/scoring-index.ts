import { isEarlierOrigin } from "./rules/origin-provider.rule.js";
import type { ScoringLists } from "./scoring-lists.js";
import type { BaseSignalsContext, TldOrigin } from "./scoring.types.js";

/** What only the whole index knows: TLD origins, names held more than once, lookalikes. */
export interface ScoringIndex {
  tldOrigins: ReadonlyMap<string, TldOrigin>;
  /** Names held by two or more domains, with the count. */
  holders: ReadonlyMap<string, number>;
  /** Lookalike name → the different, higher-scored name it imitates. */
  imitated: ReadonlyMap<string, string>;
}

export const EMPTY_INDEX: ScoringIndex = { tldOrigins: new Map(), holders: new Map(), imitated: new Map() };

/** The full context of the base rules: the operator's lists plus the index lookups. */
export function scoringContext(lists: ScoringLists, index: ScoringIndex = EMPTY_INDEX): BaseSignalsContext {
  return {
    ...lists,
    tldOrigin: (tld) => index.tldOrigins.get(tld) ?? null,
    holders: (name) => index.holders.get(name) ?? 1,
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
