/**
 * A spam domain's score is capped low: it can still be served (partners see it flagged, with the
 * reason in its tags) but it never wins a collision against a clean domain.
 */
export const SPAM_CAP = 10;

export const SPAM_CAP_RULE = { name: "spam-cap", weight: `score capped at ${SPAM_CAP}` } as const;

/** The (non-positive) effect that brings `score` under the cap. */
export function spamCapEffect(score: number): number {
  return score > SPAM_CAP ? SPAM_CAP - score : 0;
}
