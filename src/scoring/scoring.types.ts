import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { Domain, DomainRecord } from "../domain/types.js";

/** One line of a score's explanation (`?explain=true`): which rule, how many points, and why. */
export interface ScoreDetail {
  rule: string;
  effect: number;
  reason: string;
}

/** The fields of a domain the base rules read: a stored Domain or a DomainWrite both fit. */
export type ScoredDomain = Pick<
  Domain,
  "provider" | "network" | "name" | "sld" | "tld" | "owner" | "registeredAt" | "expiresAt"
>;

/** Which namespace first registered a TLD (or a name under it). */
export interface TldOrigin {
  provider: Provider;
  network: Network;
  registeredAt: number | null;
}

/** Exact names (`scam.wallet`) and whole TLDs (`*.badtld`) that are spam by operator decision. */
export interface Blocklist {
  names: ReadonlySet<string>;
  tlds: ReadonlySet<string>;
}

/**
 * What the base rules need besides the domain: the operator's lists and lookups over the index.
 * The index lookups are optional so a writer without the index (one domain at a time) still gets
 * every name-local signal; `rescoreAll` fills them in.
 */
export interface BaseSignalsContext {
  /** CSAM screening terms, NFKC lower case (`CSAM_TERMS_FILE`). */
  csamTerms: readonly string[];
  blocklist: Blocklist;
  /** Lower-case owner addresses on the operator's KYC list. */
  kycOwners: ReadonlySet<string>;
  /** TLDs of the ICANN root, lower-case Unicode. */
  icannTlds: ReadonlySet<string>;
  /** The origin of a TLD as the index knows it; `null` when no other name of the TLD is known. */
  tldOrigin(tld: string): TldOrigin | null;
  /** How many domains (across providers and networks) hold exactly this name. */
  holders?(name: string): number;
  /** The different, higher-scored indexed name this name imitates (TR39 skeleton), if any. */
  imitated?(name: string): string | null;
}

/** The stored signals of a domain (Domain's scoring fields). */
export interface BaseSignals {
  baseScore: number;
  spam: boolean;
  csamOk: boolean;
  kyc: boolean;
  tags: string[];
}

export interface BaseRuleInput {
  domain: ScoredDomain;
  records: readonly DomainRecord[];
  ctx: BaseSignalsContext;
}

/** What one rule says about one domain. */
export interface RuleOutcome {
  /** Points added to the score (negative for a penalty, 0 for a tag-only finding). */
  effect: number;
  reason: string;
  tags?: readonly string[];
  /** The finding makes the domain spam (its score is then capped, see spam-cap.rule.ts). */
  spam?: boolean;
}

/**
 * A base scoring rule: a name, its documented weight and a pure function. It returns `null` when
 * it has nothing to say about the domain.
 *
 * @example
 * export const kycRule: BaseRule = {
 *   name: "kyc", weight: "+5",
 *   evaluate: ({ domain, ctx }) => ctx.kycOwners.has(domain.owner) ? { effect: 5, reason: "owner passed KYC" } : null,
 * };
 */
export interface BaseRule {
  name: string;
  /** The weight as docs/scoring.md states it, e.g. "+20" or "spam". */
  weight: string;
  evaluate(input: BaseRuleInput): RuleOutcome | null;
}
