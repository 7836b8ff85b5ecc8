import dnsPacket from "dns-packet";
import { TYPE } from "./wire-query.js";

/** Largest DNS message a DoH request may carry (RFC 8484 §6: a DNS message's own limit). */
export const MAX_DOH_MESSAGE = 65535;
export const DNS_MESSAGE = "application/dns-message";
export const DNS_JSON = "application/dns-json";

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The query of `GET /dns-query?dns=`: base64url without padding (RFC 8484 §4.1), or null. */
export function decodeDnsParam(value: string): Buffer | null {
  if (!BASE64URL.test(value) || value.length % 4 === 1) return null;
  return Buffer.from(value, "base64url");
}

/**
 * `Cache-Control: max-age` of an answer (RFC 8484 §5.1): the smallest TTL of the answer section;
 * for a negative answer, the SOA's negative TTL (its TTL capped by its MINIMUM, RFC 2308); 0 when
 * the answer holds neither (REFUSED, FORMERR, SERVFAIL).
 */
export function buildMaxAge(answer: Buffer): number {
  let packet: dnsPacket.DecodedPacket;
  try {
    packet = dnsPacket.decode(answer);
  } catch {
    return 0;
  }
  const ttls = (packet.answers ?? []).map((a) => (a as { ttl?: number }).ttl ?? 0);
  if (ttls.length > 0) return Math.min(...ttls);
  const soa = (packet.authorities ?? []).find((a) => a.type === "SOA") as
    | { ttl?: number; data: dnsPacket.SoaData }
    | undefined;
  return soa ? Math.min(soa.ttl ?? 0, soa.data.minimum ?? 0) : 0;
}

/** The query packet of the JSON form (`?name=&type=`): id 0, RD, as the public resolvers build it. */
export function buildJsonQuery(name: string, type: string, cd: boolean): Buffer | null {
  const t = /^\d{1,5}$/.test(type) ? Number(type) : type.toUpperCase();
  const typeName = typeof t === "number" ? TYPE_NAMES[t] : TYPE_NAMES[TYPE_NUMBERS[t] ?? -1];
  if (typeName === undefined || name.length === 0 || name.length > 253 + 1) return null;
  try {
    return dnsPacket.encode({
      type: "query",
      id: 0,
      flags: dnsPacket.RECURSION_DESIRED | (cd ? dnsPacket.CHECKING_DISABLED : 0),
      questions: [{ name, type: typeName as never }],
    });
  } catch {
    return null;
  }
}

// The JSON form's type names: the query types of the wire parser (not the pseudo-types OPT, IXFR
// and AXFR), plus two common ones a client may ask for by name.
const { OPT: _opt, IXFR: _ixfr, AXFR: _axfr, ...QUERY_TYPES } = TYPE;
const TYPE_NUMBERS: Record<string, number> = { ...QUERY_TYPES, SRV: 33, CAA: 257 };
const TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(TYPE_NUMBERS).map(([k, v]) => [v, k]),
);

function fqdn(name: string): string {
  return name === "." || name.endsWith(".") ? name : `${name}.`;
}

function dataText(a: dnsPacket.Answer): string {
  const d = (a as { data: unknown }).data;
  switch (a.type) {
    case "TXT":
      return (d as Buffer[]).map((b) => JSON.stringify(b.toString("utf8"))).join(" ");
    case "MX": {
      const mx = d as { preference: number; exchange: string };
      return `${mx.preference} ${fqdn(mx.exchange || ".")}`;
    }
    case "SOA": {
      const s = d as dnsPacket.SoaData;
      return `${fqdn(s.mname)} ${fqdn(s.rname)} ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minimum}`;
    }
    case "CNAME":
    case "NS":
      return fqdn(String(d));
    default:
      return String(d);
  }
}

function rrJson(a: dnsPacket.Answer): { name: string; type: number; TTL: number; data: string } {
  return {
    name: fqdn(a.name),
    type: TYPE_NUMBERS[a.type] ?? 0,
    TTL: (a as { ttl?: number }).ttl ?? 0,
    data: dataText(a),
  };
}

/**
 * The JSON form of an answer, with the field names of the public resolvers (Google's
 * `/resolve`, Cloudflare's `application/dns-json`): Status, TC, RD, RA, AD, CD, Question, Answer,
 * Authority. TXT data is the quoted presentation form, as Cloudflare gives it.
 */
export function buildDohJson(answer: Buffer): Record<string, unknown> {
  const p = dnsPacket.decode(answer);
  const flags = p.flags ?? 0;
  const out: Record<string, unknown> = {
    Status: flags & 0xf,
    TC: p.flag_tc,
    RD: p.flag_rd,
    RA: p.flag_ra,
    AD: p.flag_ad,
    CD: p.flag_cd,
    Question: (p.questions ?? []).map((q) => ({ name: fqdn(q.name), type: TYPE_NUMBERS[q.type] ?? 0 })),
  };
  if ((p.answers ?? []).length > 0) out.Answer = p.answers!.map(rrJson);
  if ((p.authorities ?? []).length > 0) out.Authority = p.authorities!.map(rrJson);
  return out;
}
