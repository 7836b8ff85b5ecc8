import type { DomainRecord } from "../domain/types.js";
import { buildNodeRRsets, type RRset } from "./resource-records.js";
import { type ApexSettings, buildApex, isInZone, type ZoneApex, type ZoneLookup } from "./zone.js";

/**
 * A zone lookup over names held in memory: the inline zones of the table tests, and the fuzz
 * test's target. Names are DNS names (lower case, A-labels); their records are canonical keys.
 *
 * @example createStaticZoneLookup({ wallet: { "alice.wallet": { "record.A.0": "10.0.0.1" } } }, settings)
 */
export function createStaticZoneLookup(
  zones: Record<string, Record<string, Record<string, string>>>,
  settings: ApexSettings,
): ZoneLookup & { answerStamp(): { map: number; zones: number } } {
  const apexes = new Map<string, ZoneApex>();
  const nodes = new Map<string, RRset[]>();
  for (const [origin, names] of Object.entries(zones)) {
    apexes.set(origin, buildApex(origin, settings));
    for (const [name, recs] of Object.entries(names)) {
      const records: DomainRecord[] = Object.entries(recs).map(([key, value]) => ({
        key,
        value,
        nativeKey: key,
        nativeValue: value,
      }));
      const { rrsets } = buildNodeRRsets(records, name);
      // A name with nothing to serve does not exist, as in a master file.
      if (rrsets.length > 0) nodes.set(name, rrsets);
    }
  }
  return {
    // The zones never change: one stamp for ever (the answer cache may keep every answer).
    answerStamp: () => ({ map: 0, zones: 0 }),
    findZone(name) {
      for (const [origin, apex] of apexes) if (isInZone(name, origin)) return apex;
      return null;
    },
    async findNode(name) {
      const found = nodes.get(name);
      if (found !== undefined) return found;
      // An empty non-terminal exists (RFC 8020): a name with names below it.
      for (const n of nodes.keys()) if (n.endsWith(`.${name}`)) return [];
      return null;
    },
  };
}
