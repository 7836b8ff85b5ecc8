import { isMixedScript, scriptsOf } from "../scripts.js";
import type { BaseRule } from "../scoring.types.js";

/** A label that mixes scripts not written together (Latin + Cyrillic) is the classic lookalike. */
export const mixedScriptRule: BaseRule = {
  name: "mixed-script",
  weight: "spam",
  evaluate({ domain }) {
    for (const label of domain.name.split(".")) {
      if (!isMixedScript(label)) continue;
      return {
        effect: 0,
        reason: `label "${label}" mixes scripts (${scriptsOf(label).join(" + ")})`,
        tags: ["spam:mixed-script"],
        spam: true,
      };
    }
    return null;
  },
};
