import type { BaseRule } from "../scoring.types.js";

const ICANN_PENALTY = -15;

/**
 * A TLD that exists in the ICANN root resolves in ordinary DNS to something else: a Web3 name
 * under it is a collision with the public internet, so it is penalized and tagged.
 */
export const icannCollisionRule: BaseRule = {
  name: "icann-collision",
  weight: `${ICANN_PENALTY}`,
  evaluate({ domain, ctx }) {
    if (!ctx.icannTlds.has(domain.tld)) return null;
    return {
      effect: ICANN_PENALTY,
      reason: `.${domain.tld} is a TLD of the ICANN root`,
      tags: ["icann-collision"],
    };
  },
};
