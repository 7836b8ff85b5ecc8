// The ranking port lives with its implementation in scoring/ (scoring must not import resolution);
// resolution, the API and DNS import it from here.
export type { ScoreDetail } from "../scoring/scoring.types.js";
export {
  createScoringRanker,
  type RankContext,
  type RankedDomain,
  type Ranker,
} from "../scoring/scoring-ranker.js";
