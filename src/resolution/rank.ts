import { NETWORK_ORDER } from "../domain/networks.js";
import { PROVIDER_ORDER } from "../domain/providers.js";
import type { DomainWithRecords } from "../domain/types.js";

/** One line of a score's explanation (`?explain=true`). */
export interface ScoreDetail {
  rule: string;
  effect: number;
  reason: string;
}

export interface RankedDomain {
  domain: DomainWithRecords;
  score: number;
  spam: boolean;
  tags: string[];
  details: ScoreDetail[];
}

/** What a ranking may depend on besides the domains: the caller's project, country and the time. */
export interface RankContext {
  /** The project's resolution settings and collision rules (JSON from the store), or {} for none. */
  projectSettings: Record<string, unknown>;
  /** ISO 3166 alpha-2 code of the caller's country, when known. */
  country: string | null;
  now: number;
  explain: boolean;
}

/**
 * The ranking port: filters out what must not be served to this caller and orders the rest, best
 * first. Pure and synchronous: it runs on the request hot path and costs microseconds.
 *
 * @example ranker.rank(candidates, { projectSettings: {}, country: null, now: Date.now(), explain: false })[0]
 */
export interface Ranker {
  rank(candidates: DomainWithRecords[], ctx: RankContext): RankedDomain[];
}

/** Deterministic tie-break of DESIGN §6: earlier registration, then provider order, then network order. */
export function tieBreak(a: DomainWithRecords, b: DomainWithRecords): number {
  const ra = a.registeredAt ?? Number.MAX_SAFE_INTEGER;
  const rb = b.registeredAt ?? Number.MAX_SAFE_INTEGER;
  if (ra !== rb) return ra - rb;
  const p = PROVIDER_ORDER.indexOf(a.provider) - PROVIDER_ORDER.indexOf(b.provider);
  if (p !== 0) return p;
  const n = NETWORK_ORDER.indexOf(a.network) - NETWORK_ORDER.indexOf(b.network);
  if (n !== 0) return n;
  return a.id - b.id;
}

/**
 * The ranking before the scoring engine: stored base score, CSAM-failing names never served,
 * expired names excluded.
 */
export const baseScoreRanker: Ranker = {
  rank(candidates, ctx) {
    return candidates
      .filter((d) => d.csamOk && (d.expiresAt === null || d.expiresAt > ctx.now))
      .sort((a, b) => b.baseScore - a.baseScore || tieBreak(a, b))
      .map((d) => ({
        domain: d,
        score: d.baseScore,
        spam: d.spam,
        tags: d.tags,
        details: ctx.explain ? [{ rule: "base", effect: d.baseScore, reason: "stored base score" }] : [],
      }));
  },
};
