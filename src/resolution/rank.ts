import type { Ranker } from "../scoring/scoring-ranker.js";

// The ranking port lives with its implementation in scoring/ (scoring must not import resolution);
// resolution, the API and DNS import it from here.
export type { ScoreDetail } from "../scoring/scoring.types.js";
export {
  createScoringRanker,
  type RankContext,
  type RankedDomain,
  type Ranker,
  type ScoringRankerOptions,
  tieBreak,
} from "../scoring/scoring-ranker.js";

import { tieBreak } from "../scoring/scoring-ranker.js";

/**
 * The ranking before the scoring engine: stored base score, CSAM-failing names never served,
 * expired names excluded. Kept until the composition root builds `createScoringRanker(...)`.
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
