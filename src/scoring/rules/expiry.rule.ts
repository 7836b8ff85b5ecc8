/**
 * Expired names are excluded by default: the owner lost the name and anyone may re-register it. A
 * project that opts in (`includeExpired: true`) sees them tagged `expired` and penalized.
 */
export const EXPIRED_PENALTY = -20;

export const EXPIRY_RULE = {
  name: "expired",
  weight: `excluded; ${EXPIRED_PENALTY} and tag \`expired\` when the project includes expired names`,
} as const;

export function isExpired(expiresAt: number | null, now: number): boolean {
  return expiresAt !== null && expiresAt <= now;
}
