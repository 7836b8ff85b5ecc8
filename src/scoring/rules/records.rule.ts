import type { BaseRule } from "../scoring.types.js";

const RECORDS_BONUS = 5;

/**
 * A name with records is in use; a bare mint of the same name elsewhere is more likely a
 * squat. Small on purpose: records are cheap to set.
 */
export const recordsRule: BaseRule = {
  name: "records",
  weight: `+${RECORDS_BONUS}`,
  evaluate({ records }) {
    if (records.length === 0) return null;
    return {
      effect: RECORDS_BONUS,
      reason: `has ${records.length} record${records.length === 1 ? "" : "s"}`,
    };
  },
};
