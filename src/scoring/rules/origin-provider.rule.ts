import { NETWORK_ORDER } from "../../domain/networks.js";
import { PROVIDER_ORDER } from "../../domain/providers.js";
import type { BaseRule, BaseSignalsContext, ScoredDomain, TldOrigin } from "../scoring.types.js";

const ORIGIN_BONUS = 20;

/** True when `a` registered before `b`: unknown times last, then provider order, then network order. */
export function isEarlierOrigin(a: TldOrigin, b: TldOrigin): boolean {
  const ra = a.registeredAt ?? Number.MAX_SAFE_INTEGER;
  const rb = b.registeredAt ?? Number.MAX_SAFE_INTEGER;
  if (ra !== rb) return ra < rb;
  const p = PROVIDER_ORDER.indexOf(a.provider) - PROVIDER_ORDER.indexOf(b.provider);
  if (p !== 0) return p < 0;
  return NETWORK_ORDER.indexOf(a.network) < NETWORK_ORDER.indexOf(b.network);
}

/**
 * The origin of the domain's TLD: the index's answer, unless this domain registered earlier (a
 * writer scoring one new domain at a time must not wait for the next rescoring to be right about
 * the domain it writes).
 */
function originOf(domain: ScoredDomain, ctx: BaseSignalsContext): TldOrigin {
  const own: TldOrigin = {
    provider: domain.provider,
    network: domain.network,
    registeredAt: domain.registeredAt,
  };
  const known = ctx.tldOrigin(domain.tld);
  return known === null || isEarlierOrigin(own, known) ? own : known;
}

/**
 * The provider that first registered the TLD (or any name under it, across namespaces) earns its
 * names a bonus: a TLD sold later by another provider is the collision this service exists for,
 * and the earlier namespace is the one users meant.
 */
export const originProviderRule: BaseRule = {
  name: "origin-provider",
  weight: `+${ORIGIN_BONUS}`,
  evaluate({ domain, ctx }) {
    const origin = originOf(domain, ctx);
    if (origin.provider === domain.provider) {
      return {
        effect: ORIGIN_BONUS,
        reason: `${domain.provider} registered .${domain.tld} (or a name under it) first`,
        tags: ["origin-provider"],
      };
    }
    return {
      effect: 0,
      reason: `.${domain.tld} originated with ${origin.provider}, which registered it first`,
      tags: [`tld-collision:${origin.provider}`],
    };
  },
};
