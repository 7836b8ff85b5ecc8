import { isProvider } from "../domain/providers.js";
import type { DomainRecord } from "../domain/types.js";
import { blocklistRule } from "./rules/blocklist.rule.js";
import { collisionRule } from "./rules/collision.rule.js";
import { confusableRule } from "./rules/confusable.rule.js";
import { screenCsam } from "./rules/csam.rule.js";
import { ensNormalizationRule } from "./rules/ens-normalization.rule.js";
import { icannCollisionRule } from "./rules/icann-collision.rule.js";
import { invisibleCharsRule } from "./rules/invisible-chars.rule.js";
import { kycRule } from "./rules/kyc.rule.js";
import { mixedScriptRule } from "./rules/mixed-script.rule.js";
import { originProviderRule } from "./rules/origin-provider.rule.js";
import { providerWeightRule } from "./rules/provider-weight.rule.js";
import { recordsRule } from "./rules/records.rule.js";
import { SPAM_CAP_RULE, spamCapEffect } from "./rules/spam-cap.rule.js";
import type {
  BaseRule,
  BaseSignals,
  BaseSignalsContext,
  ScoreDetail,
  ScoredDomain,
} from "./scoring.types.js";

/** Every domain starts here; the rules move it. 50 leaves room both ways. */
const BASE_START = 50;

/** The base rules, in the order they are applied and explained. */
export const BASE_RULES: readonly BaseRule[] = [
  providerWeightRule,
  originProviderRule,
  icannCollisionRule,
  kycRule,
  recordsRule,
  collisionRule,
  ensNormalizationRule,
  invisibleCharsRule,
  mixedScriptRule,
  confusableRule,
  blocklistRule,
];

export function clampScore(n: number): number {
  return Math.max(0, Math.min(100, Math.round(n)));
}

interface BaseSignalsWithDetails extends BaseSignals {
  details: ScoreDetail[];
}

/**
 * The base score and abuse signals of a domain, computed when it is written (crawler, import,
 * rescoring). Pure and deterministic: the same domain, records and context give the same result.
 * The returned object can be passed as is to `store.updateDomainSignals`.
 *
 * @example
 * const s = computeBaseSignals(domain, records, ctx);
 * await store.updateDomainSignals(id, s);
 */
export function computeBaseSignals(
  domain: ScoredDomain,
  records: readonly DomainRecord[],
  ctx: BaseSignalsContext,
): BaseSignalsWithDetails {
  const details: ScoreDetail[] = [{ rule: "start", effect: BASE_START, reason: "every domain starts at 50" }];
  const tags: string[] = [];
  let score = BASE_START;
  let spam = false;
  const input = { domain, records, ctx };
  for (const rule of BASE_RULES) {
    const out = rule.evaluate(input);
    if (out === null) continue;
    score += out.effect;
    if (out.spam) spam = true;
    if (out.tags) for (const t of out.tags) if (!tags.includes(t)) tags.push(t);
    details.push({ rule: rule.name, effect: out.effect, reason: out.reason });
  }
  score = clampScore(score);
  if (spam) {
    const cap = spamCapEffect(score);
    if (cap !== 0) {
      score += cap;
      details.push({ rule: SPAM_CAP_RULE.name, effect: cap, reason: `spam: ${SPAM_CAP_RULE.weight}` });
    }
  }
  const csamOk = screenCsam(domain.name, ctx.csamTerms) < 0;
  if (!csamOk) tags.push("csam");
  return { baseScore: score, spam, csamOk, kyc: ctx.kycOwners.has(domain.owner), tags, details };
}

/**
 * The writer's hook (the crawler's SignalsFn, an import): base signals with the context in force
 * at call time, without the explanation, ready for `upsertDomain`.
 *
 * @example createBaseSignalsFn(() => scoringContext(lists, lastIndex))
 */
export function createBaseSignalsFn(
  ctx: () => BaseSignalsContext,
): (domain: ScoredDomain, records: readonly DomainRecord[]) => BaseSignals {
  return (domain, records) => {
    const s = computeBaseSignals(domain, records, ctx());
    return { baseScore: s.baseScore, spam: s.spam, csamOk: s.csamOk, kyc: s.kyc, tags: s.tags };
  };
}

const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * Rebuilds the context a stored domain was scored with from its stored signals (tags and flags),
 * so `?explain=true` can list the base rules without the index. Only the explain path uses it.
 */
export function replayContext(domain: ScoredDomain & Pick<BaseSignals, "tags" | "kyc">): BaseSignalsContext {
  const confusableTag = domain.tags.find((t) => t.startsWith("confusable:"));
  const originTag = domain.tags.find((t) => t.startsWith("tld-collision:"));
  const blocked = domain.tags.includes("spam:blocklist");
  return {
    csamTerms: [],
    blocklist: { names: blocked ? new Set([domain.name]) : NO_NAMES, tlds: NO_NAMES },
    kycOwners: domain.kyc ? new Set([domain.owner]) : NO_NAMES,
    icannTlds: domain.tags.includes("icann-collision") ? new Set([domain.tld]) : NO_NAMES,
    tldOrigin: () => {
      if (originTag === undefined) return null;
      const provider = originTag.slice("tld-collision:".length);
      // Registered before anything: the rule then reports the collision with the stored origin.
      return isProvider(provider)
        ? { provider, network: domain.network, registeredAt: Number.NEGATIVE_INFINITY }
        : null;
    },
    holders: () => (domain.tags.includes("collision") ? 2 : 1),
    imitated: () => (confusableTag ? confusableTag.slice("confusable:".length) : null),
  };
}
