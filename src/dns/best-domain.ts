import type { RankContext, RankedDomain } from "../resolution/rank.js";
import type { Resolution } from "../resolution/resolution.js";
import { AGE_MAX, AGE_STEP_MS } from "../scoring/rules/age.rule.js";
import { buildDnsName } from "./dns-name.js";
import type { AnswerMeta } from "./zone.js";

/** The rank context of a DNS answer: the project's settings (public endpoints: none), no country. */
export function dnsRankContext(projectSettings: Record<string, unknown>, now: number): RankContext {
  return { projectSettings, country: null, now, explain: false };
}

/**
 * The domain a DNS name answers with: the highest-scored of those whose DNS form is exactly this
 * name, in resolve's own order (deep-resolve ranks; nothing is re-ranked here). Resolve may also
 * match another stored form of the name (the ENSIP-15 form of a full-width label): that domain has
 * its own DNS name and answers there. Null when no served domain has this name.
 *
 * @example await findBestDomain(resolution, "xn--caf-dma.eth", ctx) // the best domain named café.eth
 */
export async function findBestDomain(
  resolution: Resolution,
  dnsName: string,
  ctx: RankContext,
  meta?: AnswerMeta,
): Promise<RankedDomain | null> {
  let ranked: RankedDomain[];
  try {
    ranked = await resolution.deepResolve(dnsName, {}, ctx);
  } catch (e) {
    // A name the naming rules refuse is no stored name: absent, not a failure.
    if (
      (e as { code?: string }).code === "INVALID_DOMAIN" ||
      (e as { code?: string }).code === "PARAMETER_TOO_LONG"
    )
      return null;
    throw e;
  }
  if (meta !== undefined) meta.validUntil = Math.min(meta.validUntil, rankingChangesAt(ranked, ctx.now));
  for (const r of ranked) {
    const dns = buildDnsName(r.domain.name);
    if (dns.ok && dns.name === dnsName) return r;
  }
  return null;
}

/**
 * The first time after `now` at which the time alone can change this ranking: a ranked candidate
 * expires (it leaves the ranking, or takes the expiry penalty) or its age rule takes its next step.
 * Candidates already left out by time (expired) never come back without a write. +Infinity when
 * nothing is due.
 */
export function rankingChangesAt(ranked: readonly RankedDomain[], now: number): number {
  let at = Number.POSITIVE_INFINITY;
  for (const { domain: d } of ranked) {
    if (d.expiresAt !== null && d.expiresAt > now) at = Math.min(at, d.expiresAt);
    if (d.registeredAt === null) continue;
    if (now <= d.registeredAt) at = Math.min(at, d.registeredAt + 1);
    else {
      const steps = Math.floor((now - d.registeredAt) / AGE_STEP_MS);
      if (steps < AGE_MAX) at = Math.min(at, d.registeredAt + (steps + 1) * AGE_STEP_MS);
    }
  }
  return at;
}
