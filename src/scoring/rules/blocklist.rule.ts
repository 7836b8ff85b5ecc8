import type { BaseRule } from "../scoring.types.js";

/** The operator's blocklist (`SPAM_BLOCKLIST_FILE`): exact names and whole TLDs (`*.tld`). */
export const blocklistRule: BaseRule = {
  name: "blocklist",
  weight: "spam",
  evaluate({ domain, ctx }) {
    const { names, tlds } = ctx.blocklist;
    if (names.has(domain.name)) {
      return {
        effect: 0,
        reason: `${domain.name} is on the operator's blocklist`,
        tags: ["spam:blocklist"],
        spam: true,
      };
    }
    if (tlds.has(domain.tld)) {
      return {
        effect: 0,
        reason: `*.${domain.tld} is on the operator's blocklist`,
        tags: ["spam:blocklist"],
        spam: true,
      };
    }
    return null;
  },
};
