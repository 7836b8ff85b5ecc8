import { NETWORK_ORDER } from "../domain/networks.js";
import { PROVIDER_ORDER } from "../domain/providers.js";
import type { Provenance } from "../domain/history.js";
import type { DomainWithRecords } from "../domain/types.js";
import { clampScore, computeBaseSignals, replayContext } from "./base-signals.js";
import type { GeoBlockedWords } from "./geography.js";
import { type CompiledProjectRules, compiledRulesOf } from "./project-rules.js";
import { AGE_RULE, ageEffect } from "./rules/age.rule.js";
import { EXCEPTION_RULE, exceptionFor, matchesException } from "./rules/exception.rule.js";
import { EXPIRED_PENALTY, EXPIRY_RULE, isExpired } from "./rules/expiry.rule.js";
import { geoBlockedWordFor } from "./rules/geo-block.rule.js";
import { isAllowedByProject } from "./rules/project-filter.rule.js";
import { PRIORITY_RULE, priorityEffect, priorityRank } from "./rules/provider-priority.rule.js";
import { SPAM_CAP_RULE, spamCapEffect } from "./rules/spam-cap.rule.js";
import type { ScoreDetail } from "./scoring.types.js";

export interface RankedDomain {
  domain: DomainWithRecords;
  score: number;
  spam: boolean;
  tags: string[];
  /** The score's explanation; empty unless `explain` was asked. Effects sum to `score`. */
  details: ScoreDetail[];
  /** Where the owner and records come from; set by resolution when `provenance` was asked. */
  provenance?: Provenance;
}

/** What a ranking may depend on besides the domains: the caller's project, country and the time. */
export interface RankContext {
  /** The project's resolution settings and collision rules (JSON from the store), or {} for none. */
  projectSettings: Record<string, unknown>;
  /**
   * The same settings compiled (`compileProjectRules`), when the caller caches them per project.
   * Absent: compiled from `projectSettings`, cached per settings object.
   */
  rules?: CompiledProjectRules;
  /** ISO 3166 alpha-2 code of the caller's country, when known (`countryFromHeader`). */
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

/** Deterministic tie-break (docs/scoring.md): earlier registration, then provider order, then network order. */
function tieBreak(a: DomainWithRecords, b: DomainWithRecords): number {
  const ra = a.registeredAt ?? Number.MAX_SAFE_INTEGER;
  const rb = b.registeredAt ?? Number.MAX_SAFE_INTEGER;
  if (ra !== rb) return ra - rb;
  const p = PROVIDER_ORDER.indexOf(a.provider) - PROVIDER_ORDER.indexOf(b.provider);
  if (p !== 0) return p;
  const n = NETWORK_ORDER.indexOf(a.network) - NETWORK_ORDER.indexOf(b.network);
  if (n !== 0) return n;
  return a.id - b.id;
}

interface Scored {
  d: DomainWithRecords;
  score: number;
  /** 0 when the project's exception picks this domain, else 1. */
  exception: number;
  priority: number;
  expired: boolean;
  details: ScoreDetail[];
}

/**
 * The project's exception first, then the score (which includes the priority bonus), then the
 * priority (scores clamped to 100 tie), then the tie-break. An exception's domain scores 100, so
 * the order never contradicts the scores a partner sees.
 */
function compare(a: Scored, b: Scored): number {
  return a.exception - b.exception || b.score - a.score || a.priority - b.priority || tieBreak(a.d, b.d);
}

interface ScoringRankerOptions {
  /** Per-country blocked words (`loadGeoBlockedWords`); none when absent. */
  geoBlockedWords?: GeoBlockedWords;
}

function baseDetails(d: DomainWithRecords): ScoreDetail[] {
  const replay = computeBaseSignals(d, d.records, replayContext(d));
  const details = replay.details;
  if (replay.baseScore !== d.baseScore) {
    details.push({
      rule: "base-adjustment",
      effect: d.baseScore - replay.baseScore,
      reason: "the stored base score was computed from other inputs; it is corrected at the next rescoring",
    });
  }
  return details;
}

/**
 * The scoring engine's query-time half: stored base score + the project's rules, the caller's
 * country and the time. No I/O, no parsing on the hot path (project rules compiled once per
 * settings object).
 *
 * Exclusions: CSAM-failing names (always), expired names (unless the project includes them),
 * disabled networks and providers, names with a word blocked in the caller's country.
 *
 * Order: (project exception, score, provider priority, tie-break), for one name or several.
 */
export function createScoringRanker(options: ScoringRankerOptions = {}): Ranker {
  const geo: GeoBlockedWords = options.geoBlockedWords ?? new Map();
  return {
    rank(candidates, ctx) {
      const rules = ctx.rules ?? compiledRulesOf(ctx.projectSettings);
      const listed = rules.priority.size;
      const scored: Scored[] = [];
      // Candidates mostly share one name: the geography check runs once per name.
      let geoName: string | null = null;
      let geoBlocked = false;
      for (const d of candidates) {
        if (!d.csamOk || !isAllowedByProject(d, rules)) continue;
        const expired = isExpired(d.expiresAt, ctx.now);
        if (expired && !rules.includeExpired) continue;
        if (ctx.country !== null && geo.size > 0) {
          if (d.name !== geoName) {
            geoName = d.name;
            geoBlocked = geoBlockedWordFor(d.name, ctx.country, geo) !== null;
          }
          if (geoBlocked) continue;
        }

        const details: ScoreDetail[] = ctx.explain ? baseDetails(d) : [];
        let score = d.baseScore;
        const age = ageEffect(d.registeredAt, ctx.now);
        if (age !== 0) {
          score += age;
          if (ctx.explain)
            details.push({ rule: AGE_RULE.name, effect: age, reason: "registered for a while" });
        }
        if (expired) {
          score += EXPIRED_PENALTY;
          if (ctx.explain)
            details.push({ rule: EXPIRY_RULE.name, effect: EXPIRED_PENALTY, reason: "the name has expired" });
        }
        const priority = priorityRank(d.provider, rules);
        const bonus = priorityEffect(priority, listed);
        if (bonus !== 0) {
          score += bonus;
          if (ctx.explain) {
            details.push({
              rule: PRIORITY_RULE.name,
              effect: bonus,
              reason: `${d.provider} is #${priority + 1} in the project's provider priority`,
            });
          }
        }
        const exc = exceptionFor(d, rules);
        const picked = exc !== null && matchesException(d, exc);
        if (picked) {
          const raise = 100 - score;
          score = 100;
          if (ctx.explain) {
            const what = exc.domain ? exc.domain : `.${exc.tld}`;
            details.push({
              rule: EXCEPTION_RULE.name,
              effect: raise,
              reason: `project exception: ${what} → ${exc.provider}${exc.network ? ` on ${exc.network}` : ""}`,
            });
          }
        }
        const clamped = clampScore(score);
        if (ctx.explain && clamped !== score) {
          details.push({ rule: "clamp", effect: clamped - score, reason: "scores are kept within 0..100" });
        }
        score = clamped;
        if (d.spam) {
          const cap = spamCapEffect(score);
          if (cap !== 0) {
            score += cap;
            if (ctx.explain)
              details.push({
                rule: SPAM_CAP_RULE.name,
                effect: cap,
                reason: `spam: ${SPAM_CAP_RULE.weight}`,
              });
          }
        }
        scored.push({ d, score, exception: picked ? 0 : 1, priority, expired, details });
      }
      return order(scored).map((s) => ({
        domain: s.d,
        score: s.score,
        spam: s.d.spam,
        tags: s.expired && !s.d.tags.includes("expired") ? [...s.d.tags, "expired"] : s.d.tags,
        details: s.details,
      }));
    },
  };
}

function order(scored: Scored[]): Scored[] {
  return scored.length < 2 ? scored : scored.sort(compare);
}
