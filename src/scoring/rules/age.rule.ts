/**
 * Older registrations earn a little: one point per full quarter (91 days) since registration, at
 * most 8 (two years). Applied at query time, because a stored age bonus would go stale without a
 * write; it costs one subtraction per candidate.
 */
export const AGE_STEP_MS = 91 * 24 * 3600 * 1000;
export const AGE_MAX = 8;

export const AGE_RULE = { name: "age", weight: `+1 per 91 days registered, at most +${AGE_MAX}` } as const;

export function ageEffect(registeredAt: number | null, now: number): number {
  if (registeredAt === null || now <= registeredAt) return 0;
  return Math.min(AGE_MAX, Math.floor((now - registeredAt) / AGE_STEP_MS));
}
