import { ens_normalize } from "@adraffy/ens-normalize";
import { hasLabelExtension, isPlainAsciiName } from "../plain-name.js";
import type { BaseRule } from "../scoring.types.js";

// ENS labels never seen in plaintext are stored as `[<64 hex>]` (domain/types.ts): not a spelling.
const UNKNOWN_LABEL = /^\[[0-9a-f]{64}\]$/;

/**
 * Why a name fails ENSIP-15, or `null` when it passes. Pure; works for every provider's names.
 * A plain lower-case ASCII name (plain-name.ts) passes unless a label has the `xx--` extension:
 * answered without running the normalizer (~2 µs a name, the crawler's largest scoring cost).
 */
export function ensip15Failure(name: string): string | null {
  if (isPlainAsciiName(name) && !hasLabelExtension(name)) return null;
  return ensip15FailureOfNormalizer(name);
}

/** ENSIP-15 by the normalizer itself, for any name (the reference of the fast path's test). */
export function ensip15FailureOfNormalizer(name: string): string | null {
  const checked = name
    .split(".")
    .map((l) => (UNKNOWN_LABEL.test(l) ? "x" : l))
    .join(".");
  let normalized: string;
  try {
    normalized = ens_normalize(checked);
  } catch (e) {
    return (e as Error).message;
  }
  // ENSIP-15 drops emoji presentation selectors (FE0F); a name that differs only by them is fine.
  return normalized === checked.replace(/\uFE0F/g, "") ? null : `normalizes to "${normalized}"`;
}

/**
 * ENSIP-15 is the strictest public standard for Web3 names (confusable scripts, disallowed and
 * invisible characters, emoji sequences). A name that fails it, in any namespace, is suspect.
 */
export const ensNormalizationRule: BaseRule = {
  name: "normalization",
  weight: "spam",
  evaluate({ domain }) {
    const failure = ensip15Failure(domain.name);
    if (failure === null) return null;
    return { effect: 0, reason: `fails ENSIP-15: ${failure}`, tags: ["spam:normalization"], spam: true };
  },
};
