import type { BaseRule } from "../scoring.types.js";

const KYC_BONUS = 5;

/** The owner is on the operator's KYC list (`omniname kyc import FILE`). */
export const kycRule: BaseRule = {
  name: "kyc",
  weight: `+${KYC_BONUS}`,
  evaluate({ domain, ctx }) {
    if (!ctx.kycOwners.has(domain.owner)) return null;
    return { effect: KYC_BONUS, reason: "the owner is on the operator's KYC list" };
  },
};
