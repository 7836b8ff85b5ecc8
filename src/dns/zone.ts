import type { DnssecSigner } from "./dnssec-sign.js";
import type { RRset } from "./resource-records.js";

/** SOA timers of every zone we serve (seconds); `minimum` is the negative-caching TTL (RFC 2308). */
export const SOA_TIMERS = { refresh: 3600, retry: 900, expire: 1_209_600, minimum: 300 } as const;
/** TTL of the apex SOA and NS RRsets. */
export const APEX_TTL = 3600;

export interface Soa {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

/** One zone: a TLD we serve, with its apex records. */
export interface ZoneApex {
  /** Lower case, no trailing dot: `wallet`. */
  origin: string;
  soa: Soa;
  nameServers: string[];
  ttl: number;
}

/**
 * Where the query handler reads data. `findZone` says which zone holds a name (null: not ours,
 * REFUSED); `findNode` gives a name's RRsets below the apex (null: the name does not exist,
 * NXDOMAIN; []: it exists without data of any type we serve, NODATA).
 *
 * @example
 * const zone = await lookup.findZone("alice.wallet"); // { origin: "wallet", … }
 * const rrsets = await lookup.findNode("alice.wallet", zone!); // [{ type: "A", ttl: 300, data: ["10.0.0.1"] }]
 */
export interface ZoneLookup {
  findZone(name: string): ZoneApex | null | Promise<ZoneApex | null>;
  /** `meta`, when given, is narrowed to what the answer depended on (the answer cache's validity). */
  findNode(name: string, zone: ZoneApex, meta?: AnswerMeta): Promise<RRset[] | null>;
  /** With DNSSEC on (docs/dns.md): the zones' DNSKEY, and signed answers to queries with DO set. */
  dnssec?: DnssecSigner | null;
}

/** What an answer depends on besides the map and the zones, filled in while it is computed. */
export interface AnswerMeta {
  /**
   * The answer may change at this time (ms) with no write to the map: a candidate's expiry or the
   * next step of its age rule. +Infinity: never by time alone.
   */
  validUntil: number;
}

export interface ApexSettings {
  /** Host names of the zone's name servers; the first is the SOA MNAME. */
  nameServers: readonly string[];
  /** The SOA RNAME in domain form (`hostmaster.example.com`). */
  hostmaster: string;
  serial: number;
}

export function buildApex(origin: string, settings: ApexSettings): ZoneApex {
  return {
    origin,
    nameServers: settings.nameServers.map((n) => n.toLowerCase()),
    ttl: APEX_TTL,
    soa: {
      // Lower case: the canonical form signatures are made over (RFC 4034 §6.2).
      mname: settings.nameServers[0].toLowerCase(),
      rname: settings.hostmaster.toLowerCase(),
      serial: settings.serial >>> 0,
      ...SOA_TIMERS,
    },
  };
}

/** TTL of a negative answer: the SOA's own TTL capped by its minimum (RFC 2308 §5). */
export function negativeTtl(zone: ZoneApex): number {
  return Math.min(zone.ttl, zone.soa.minimum);
}

/** Whether `name` is the origin or below it (both lower case, no trailing dot). */
export function isInZone(name: string, origin: string): boolean {
  return name === origin || name.endsWith(`.${origin}`);
}
