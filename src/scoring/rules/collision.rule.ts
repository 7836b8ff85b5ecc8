import type { BaseRule } from "../scoring.types.js";

/** Tags a name held by more than one (provider, network): no points, the other rules decide. */
export const collisionRule: BaseRule = {
  name: "collision",
  weight: "0 (tag)",
  evaluate({ domain, ctx }) {
    const n = ctx.holders?.(domain.name) ?? 1;
    if (n < 2) return null;
    return {
      effect: 0,
      reason: `${domain.name} is also held in another namespace or network`,
      tags: ["collision"],
    };
  },
};
