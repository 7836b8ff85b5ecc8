import type { DomainWithRecords } from "../domain/types.js";
import type { RankContext, Ranker } from "../resolution/rank.js";
import { lookupNames, type Resolution } from "../resolution/resolution.js";
import { findBestDomain } from "./best-domain.js";
import { buildDnsName } from "./dns-name.js";

/** Picks, for one stored name's domains, the domain that answers its DNS name. */
export interface ZoneWinners {
  /**
   * `group` is every domain stored under one name (a name of `iterateDomainsByName`, whole),
   * `dnsName` that name's DNS form. The domain of `group` that `findBestDomain(resolution,
   * dnsName, ctx)` returns, or null: none is served (expired, CSAM-failing, disabled by the
   * project …), or the winner is stored under another name and is picked on that name's group.
   */
  pick(group: readonly DomainWithRecords[], dnsName: string): Promise<DomainWithRecords | null>;
  /**
   * `pick` without a promise when the group alone decides (almost every name): the domain or
   * null as `pick` returns them, or undefined when the name must be asked of `pick` (another
   * stored form answers there too). The export's loop calls this first: no await a name.
   */
  pickHere(group: readonly DomainWithRecords[], dnsName: string): DomainWithRecords | null | undefined;
}

/**
 * The zone export's winners, chosen in process from the name-ordered stream with the ranker that
 * `resolution` uses, and identical to `findBestDomain` (zone-winners.conformance.test.ts, both
 * backends). findBestDomain's candidates are the domains stored under any of
 * `lookupNames(dnsName)` whose DNS form is `dnsName`, ranked; its answer is the first. When that
 * list is the group's own name alone (every plain name, and every IDN and ENSIP-15 form tried),
 * the group holds every candidate and ranking it is the same ranking. Otherwise another stored
 * form also answers there, outside this group: that name is asked of `findBestDomain` itself.
 *
 * @example
 * const winners = createZoneWinners({ ranker, resolution, ctx: dnsRankContext({}, Date.now()) });
 * await winners.pick(group, "alice.wallet") // the domain of `group` served as alice.wallet, or null
 */
export function createZoneWinners(deps: {
  ranker: Ranker;
  resolution: Resolution;
  ctx: RankContext;
}): ZoneWinners {
  const { ranker, resolution, ctx } = deps;
  const pickHere = (group: readonly DomainWithRecords[], dnsName: string) => {
    if (group.length === 0) return null;
    const name = group[0].name;
    let names: string[];
    try {
      names = lookupNames(dnsName);
    } catch (e) {
      // findBestDomain: a DNS name the naming rules refuse answers with nothing.
      const code = (e as { code?: string }).code;
      if (code === "INVALID_DOMAIN" || code === "PARAMETER_TOO_LONG") return null;
      throw e;
    }
    // Not looked up under its own stored form: resolve never reaches this group.
    if (!names.includes(name)) return null;
    const elsewhere = names.some((n) => {
      if (n === name) return false;
      const dns = buildDnsName(n);
      return dns.ok && dns.name === dnsName;
    });
    if (elsewhere) return undefined;
    return ranker.rank(group as DomainWithRecords[], ctx)[0]?.domain ?? null;
  };
  return {
    pickHere,
    async pick(group, dnsName) {
      const here = pickHere(group, dnsName);
      if (here !== undefined) return here;
      const best = await findBestDomain(resolution, dnsName, ctx);
      return best === null ? null : (group.find((d) => d.id === best.domain.id) ?? null);
    },
  };
}
