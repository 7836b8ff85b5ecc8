import { canonicalNameWire, dnskeyText, type DnssecKeys } from "./dnssec-keys.js";
import {
  buildRrsig,
  nsecRdata,
  type SignableRRset,
  TYPE_DNSKEY,
  TYPE_NSEC,
  TYPE_RRSIG,
} from "./dnssec-sign.js";
import type { RRset } from "./resource-records.js";
import { nameRdata, rrsetToWire, soaRdata, typeNumberOf } from "./wire-response.js";
import { TYPE } from "./wire-query.js";
import { negativeTtl, type ZoneApex } from "./zone.js";

const TYPE_NAMES: Record<number, string> = {
  [TYPE.A]: "A",
  [TYPE.NS]: "NS",
  [TYPE.CNAME]: "CNAME",
  [TYPE.SOA]: "SOA",
  [TYPE.MX]: "MX",
  [TYPE.TXT]: "TXT",
  [TYPE.AAAA]: "AAAA",
  [TYPE_RRSIG]: "RRSIG",
  [TYPE_NSEC]: "NSEC",
  [TYPE_DNSKEY]: "DNSKEY",
};

/** A time in RRSIG master-file form, YYYYMMDDHHmmSS (RFC 4034 §3.2). */
function rrsigTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

/** The RRSIG lines of one RRset, one by each key. */
function rrsigLines(zone: string, set: SignableRRset, keys: DnssecKeys, nowS: number): string {
  const signerLength = canonicalNameWire(zone).length;
  let out = "";
  for (const key of keys.keys) {
    const r = buildRrsig(zone, set, key, nowS);
    const fields = [
      TYPE_NAMES[set.type],
      r[2],
      r[3],
      r.readUInt32BE(4),
      rrsigTime(r.readUInt32BE(8)),
      rrsigTime(r.readUInt32BE(12)),
      r.readUInt16BE(16),
      `${zone}.`,
      r.subarray(18 + signerLength).toString("base64"),
    ];
    out += `${set.owner}.\t${set.ttl}\tIN\tRRSIG\t${fields.join(" ")}\n`;
  }
  return out;
}

/** DNSKEY lines of the apex, and the RRSIGs of the apex's SOA, NS and DNSKEY RRsets. */
export function buildSignedApexLines(apex: ZoneApex, keys: DnssecKeys, nowS: number): string {
  const origin = apex.origin;
  let out = "";
  for (const key of keys.keys) out += `${dnskeyText(origin, key, apex.ttl)}\n`;
  const sets: SignableRRset[] = [
    { owner: origin, type: TYPE.SOA, ttl: apex.ttl, rdatas: [soaRdata(apex.soa).subarray(2)] },
    {
      owner: origin,
      type: TYPE.NS,
      ttl: apex.ttl,
      rdatas: apex.nameServers.map((n) => nameRdata(n).subarray(2)),
    },
    { owner: origin, type: TYPE_DNSKEY, ttl: apex.ttl, rdatas: keys.keys.map((k) => k.dnskey) },
  ];
  for (const set of sets) out += rrsigLines(origin, set, keys, nowS);
  return out;
}

/** The RRSIG lines of a name's RRsets. */
export function buildNodeSignatureLines(
  zone: string,
  name: string,
  rrsets: readonly RRset[],
  keys: DnssecKeys,
  nowS: number,
): string {
  let out = "";
  for (const set of rrsets) {
    const rdatas = rrsetToWire(set, name).map((rr) => rr.rdata.subarray(2));
    out += rrsigLines(zone, { owner: name, type: typeNumberOf(set), ttl: set.ttl, rdatas }, keys, nowS);
  }
  return out;
}

/** Canonical order (RFC 4034 §6.1): labels compared from the root, each as lower-case octets. */
function canonicalKey(name: string): string {
  return name.split(".").reverse().join("\u0000");
}

/**
 * The NSEC chain of an exported zone (classic NSEC, RFC 4034 §4): every name that owns data, in
 * canonical order, each pointing at the next and the last at the apex. Names are kept until the
 * end (a signed export holds every name and its types in memory, not its records).
 */
export class NsecChain {
  private readonly names: Array<{ key: string; name: string; types: number[] }> = [];

  add(name: string, rrsets: readonly RRset[]): void {
    this.names.push({ key: canonicalKey(name), name, types: rrsets.map(typeNumberOf) });
  }

  /** The NSEC records and their RRSIGs. */
  buildLines(apex: ZoneApex, keys: DnssecKeys, nowS: number): string {
    const sorted = [...this.names].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const chain = [
      { name: apex.origin, types: [TYPE.NS, TYPE.SOA, TYPE_DNSKEY] },
      ...sorted.map((n) => ({ name: n.name, types: n.types })),
    ];
    const ttl = negativeTtl(apex);
    let out = "";
    for (let i = 0; i < chain.length; i++) {
      const { name, types } = chain[i];
      const next = chain[(i + 1) % chain.length].name;
      const all = [...types, TYPE_RRSIG, TYPE_NSEC].sort((a, b) => a - b);
      out += `${name}.\t${ttl}\tIN\tNSEC\t${next}. ${all.map((t) => TYPE_NAMES[t]).join(" ")}\n`;
      const set = { owner: name, type: TYPE_NSEC, ttl, rdatas: [nsecRdata(next, all)] };
      out += rrsigLines(apex.origin, set, keys, nowS);
    }
    return out;
  }
}
