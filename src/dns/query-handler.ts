import { ERROR_CODES, isAppError } from "../domain/errors.js";
import { type AnswerSections, type Denial, signAnswer } from "./dnssec-answer.js";
import { TYPE_DNSKEY } from "./dnssec-sign.js";
import type { RRset } from "./resource-records.js";
import {
  buildHeaderOnly,
  buildResponse,
  nameRdata,
  rrsetToWire,
  soaRdata,
  typeNumberOf,
  type WireRR,
} from "./wire-response.js";
import { CLASS_IN, type ParsedQuery, parseQuery, RCODE, TYPE } from "./wire-query.js";
import { type AnswerMeta, isInZone, negativeTtl, type ZoneApex, type ZoneLookup } from "./zone.js";

export type Transport = "udp" | "tcp" | "doh";

/** The largest UDP answer we send whatever the client offers (fragmentation beyond it). */
export const MAX_UDP_ANSWER = 4096;
/** How many CNAMEs an answer follows inside the zone. */
const MAX_CHAIN = 8;
// What a served name's labels can hold (dns-name.ts): any other byte means the name cannot exist.
const SERVABLE_LABEL = /^[A-Za-z0-9_-]{1,63}$/;

type Answer = AnswerSections;

// A zone's SOA RDATA is the same in every answer until the zone (its serial) is rebuilt.
const soaRdataOf = new WeakMap<ZoneApex, Buffer>();

function soaRR(zone: ZoneApex, owner: number | string, ttl: number): WireRR {
  let rdata = soaRdataOf.get(zone);
  if (rdata === undefined) {
    rdata = soaRdata(zone.soa);
    soaRdataOf.set(zone, rdata);
  }
  return { owner, type: TYPE.SOA, ttl, rdata };
}

function negative(
  zone: ZoneApex,
  apexOwner: number,
  rcode: number,
  denial: Denial,
  answers: WireRR[] = [],
): Answer {
  return { rcode, aa: true, answers, authority: [soaRR(zone, apexOwner, negativeTtl(zone))], denial };
}

/** The types a node has, for a NODATA answer's NSEC. */
function typesOf(rrsets: RRset[]): number[] {
  return rrsets.map(typeNumberOf);
}

/** The RRset answering `qtype` at a node (ANY: one RRset, RFC 8482), or null. */
function pick(rrsets: RRset[], qtype: number): RRset | null {
  if (qtype === TYPE.ANY) return rrsets[0] ?? null;
  return rrsets.find((s) => typeNumberOf(s) === qtype) ?? null;
}

async function answerInZone(
  query: ParsedQuery,
  zone: ZoneApex,
  lookup: ZoneLookup,
  meta: AnswerMeta | undefined,
): Promise<Answer> {
  const q = query.question;
  const name = q.name.toLowerCase();
  const originLabels = zone.origin.split(".").length;
  // The apex owner is a pointer to the origin's labels inside the question.
  const apexOwner = q.labelOffsets[q.labelOffsets.length - originLabels];
  const qtype = q.type;

  if (name === zone.origin) {
    // IXFR outside a transfer (UDP, DoH): our current SOA alone, as RFC 1995 §2 and §4 answer an
    // IXFR that does not fit a datagram; the client asks again over TCP if its copy is older.
    if (qtype === TYPE.SOA || qtype === TYPE.ANY || qtype === TYPE.IXFR)
      return { rcode: RCODE.NOERROR, aa: true, answers: [soaRR(zone, 12, zone.ttl)], authority: [] };
    if (qtype === TYPE.NS) {
      const answers = zone.nameServers.map((ns) => ({
        owner: 12,
        type: TYPE.NS,
        ttl: zone.ttl,
        rdata: nameRdata(ns),
      }));
      return { rcode: RCODE.NOERROR, aa: true, answers, authority: [] };
    }
    if (qtype === TYPE_DNSKEY && lookup.dnssec) {
      const answers = lookup.dnssec.keys.keys.map((k) => ({
        owner: 12,
        type: TYPE_DNSKEY,
        ttl: zone.ttl,
        rdata: withLength(k.dnskey),
      }));
      return { rcode: RCODE.NOERROR, aa: true, answers, authority: [] };
    }
    const apexTypes = [TYPE.NS, TYPE.SOA, ...(lookup.dnssec ? [TYPE_DNSKEY] : [])];
    return negative(zone, apexOwner, RCODE.NOERROR, { owner: 12, name: q.name, types: apexTypes });
  }

  // Denials name the question as sent: the signer lowers its ASCII letters only (RFC 4034 §6.2).
  const nxdomain: Denial = { owner: 12, name: q.name, types: null };
  const labels = q.name.split(".");
  if (!labels.every((l) => SERVABLE_LABEL.test(l)))
    return negative(zone, apexOwner, RCODE.NXDOMAIN, nxdomain);
  const rrsets = await lookup.findNode(name, zone, meta);
  if (rrsets === null) return negative(zone, apexOwner, RCODE.NXDOMAIN, nxdomain);
  const cname = rrsets.find((s) => s.type === "CNAME");
  if (cname === undefined || qtype === TYPE.CNAME || qtype === TYPE.ANY) {
    const set = pick(rrsets, qtype);
    if (set === null)
      return negative(zone, apexOwner, RCODE.NOERROR, { owner: 12, name: q.name, types: typesOf(rrsets) });
    return { rcode: RCODE.NOERROR, aa: true, answers: rrsetToWire(set, 12), authority: [] };
  }

  // A CNAME: follow it while it stays in this zone, as an authoritative server does (RFC 1034
  // §4.3.2); the rcode is that of the last name of the chain (RFC 6604).
  const answers = [...rrsetToWire(cname, 12)];
  const seen = new Set([name]);
  let target = (cname.data as string[])[0];
  for (let hop = 0; hop < MAX_CHAIN; hop++) {
    if (!isInZone(target, zone.origin) || target === zone.origin || seen.has(target)) break;
    seen.add(target);
    const next = await lookup.findNode(target, zone, meta);
    if (next === null)
      return negative(zone, apexOwner, RCODE.NXDOMAIN, { owner: target, name: target, types: null }, answers);
    const set = pick(next, qtype);
    if (set !== null) {
      answers.push(...rrsetToWire(set, target));
      break;
    }
    const alias = next.find((s) => s.type === "CNAME");
    if (alias === undefined) {
      const denial: Denial = { owner: target, name: target, types: typesOf(next) };
      return negative(zone, apexOwner, RCODE.NOERROR, denial, answers);
    }
    answers.push(...rrsetToWire(alias, target));
    target = (alias.data as string[])[0];
  }
  return { rcode: RCODE.NOERROR, aa: true, answers, authority: [] };
}

function withLength(rdata: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(rdata.length, 0);
  return Buffer.concat([len, rdata]);
}

/** The rcode of a failed lookup: the registry's (docs/errors.md) for an AppError, else SERVFAIL. */
function rcodeOfError(e: unknown): number {
  const name = isAppError(e) ? ERROR_CODES[e.code].rcode : "SERVFAIL";
  const rcode = RCODE[name as keyof typeof RCODE];
  // A lookup failure never claims a name's absence: NXDOMAIN comes only from the zone's data.
  return rcode === undefined || rcode === RCODE.NXDOMAIN || rcode === RCODE.NOERROR ? RCODE.SERVFAIL : rcode;
}

function sizeLimit(query: ParsedQuery, transport: Transport): number {
  if (transport !== "udp") return 65535;
  if (query.edns === null) return 512;
  return Math.max(512, Math.min(query.edns.udpSize, MAX_UDP_ANSWER));
}

/** What `answerQuery` reports about an answer, for the answer cache (answer-cache.ts). */
export interface AnswerReport extends AnswerMeta {
  /** True when the answer came from the zones' data (no failure, no malformed query). */
  cacheable: boolean;
}

/**
 * Answers one DNS query packet as an authoritative server (docs/dns.md, "Server behaviour"), or
 * returns null when the packet deserves no answer (shorter than a header, or a response). Every
 * transport calls this one function, so UDP, TCP and DoH give the same bytes for the same query;
 * only the UDP size limit (TC) differs. Never throws: a failing lookup is SERVFAIL.
 *
 * @example await answerQuery(dnsPacket.encode({ questions: [{ type: "A", name: "alice.wallet" }] }), lookup, "udp")
 */
export async function answerQuery(
  packet: Buffer,
  lookup: ZoneLookup,
  transport: Transport,
  report?: AnswerReport,
): Promise<Buffer | null> {
  const parsed = parseQuery(packet);
  if (parsed.kind === "drop") return null;
  if (parsed.kind === "error") return buildHeaderOnly(parsed.id, parsed.opcode, parsed.rd, parsed.rcode);
  const query = parsed.query;
  const q = query.question;

  let answer: Answer;
  if (query.edns !== null && query.edns.version !== 0) {
    answer = { rcode: RCODE.BADVERS, aa: false, answers: [], authority: [] };
  } else if (q.qclass !== CLASS_IN || q.type === TYPE.AXFR || q.type === TYPE.OPT) {
    // No other class, and no AXFR here: transfers are TCP only (xfr-server.ts).
    answer = { rcode: RCODE.REFUSED, aa: false, answers: [], authority: [] };
  } else {
    try {
      const zone = q.labelOffsets.length === 0 ? null : await lookup.findZone(q.name.toLowerCase());
      answer =
        zone === null
          ? { rcode: RCODE.REFUSED, aa: false, answers: [], authority: [] }
          : await answerInZone(query, zone, lookup, report);
      // DNSSEC (docs/dns.md): signatures and denial of existence only for a query with DO set.
      if (zone !== null && lookup.dnssec && query.edns?.dnssecOk)
        answer = signAnswer(answer, {
          zone,
          signer: lookup.dnssec,
          qname: q.name,
          qtype: q.type,
          report,
        });
      // A refusal is not kept: a TLD first registered since the zones were read turns it into an
      // answer (the lookup reads them again on such a miss), and it is cheap to give again.
      if (report !== undefined) report.cacheable = zone !== null;
    } catch (e) {
      answer = { rcode: rcodeOfError(e), aa: false, answers: [], authority: [] };
    }
  }

  const full = buildResponse({ query, ...answer });
  const isError = answer.rcode !== RCODE.NOERROR && answer.rcode !== RCODE.NXDOMAIN;
  // No amplification: an error is never larger than the query that caused it.
  if (isError && full.length > packet.length)
    return buildHeaderOnly(query.id, query.opcode, query.rd, answer.rcode & 0xf);
  if (full.length <= sizeLimit(query, transport)) return full;
  return buildResponse({ query, rcode: answer.rcode, aa: answer.aa, tc: true });
}
