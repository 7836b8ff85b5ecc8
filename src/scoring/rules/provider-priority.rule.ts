import type { CompiledProjectRules } from "../project-rules.js";

/**
 * The project's provider priority raises the preferred providers: +40 per place ahead of the
 * unlisted providers (first of two: +80, second: +40). 40 is more than the base scores of one
 * name can differ between live providers (origin 20 + KYC 5 + records 5 + age 8 = 38), so one
 * place in the list always outweighs them; when the clamp at 100 makes scores equal, the priority
 * breaks the tie. The order therefore follows the priority and the scores never contradict it.
 */
const PRIORITY_STEP = 40;

export const PRIORITY_RULE = {
  name: "provider-priority",
  weight: `+${PRIORITY_STEP} per place ahead of the unlisted providers; breaks ties`,
} as const;

/** Position in the priority list; every unlisted provider shares the place after the list. */
export function priorityRank(provider: string, rules: Pick<CompiledProjectRules, "priority">): number {
  return rules.priority.get(provider) ?? rules.priority.size;
}

export function priorityEffect(rank: number, listed: number): number {
  return PRIORITY_STEP * Math.max(0, listed - rank);
}
