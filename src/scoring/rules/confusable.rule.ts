import type { BaseRule } from "../scoring.types.js";

/**
 * The name has the same TR39 skeleton as a different, higher-scored indexed name (found across
 * the index by jobs/rescore.job.ts): it imitates that name.
 */
export const confusableRule: BaseRule = {
  name: "confusable",
  weight: "spam",
  evaluate({ domain, ctx }) {
    const other = ctx.imitated?.(domain.name) ?? null;
    if (other === null) return null;
    return {
      effect: 0,
      reason: `looks like ${other} (same Unicode TR39 skeleton), a higher-scored indexed name`,
      tags: ["spam:confusable", `confusable:${other}`],
      spam: true,
    };
  },
};
