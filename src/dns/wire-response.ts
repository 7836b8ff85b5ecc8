import dnsPacket from "dns-packet";
import type { RRset } from "./resource-records.js";
import { type Edns, type ParsedQuery, TYPE } from "./wire-query.js";
import type { Soa } from "./zone.js";

interface Encoder {
  encode(data: unknown): Buffer;
}
// dns-packet's per-type RDATA codecs (exported by the library, absent from its typings).
const codec = dnsPacket as unknown as {
  record(type: string): Encoder;
  soa: Encoder;
  ns: Encoder;
  name: Encoder;
};

/** The UDP payload size we advertise in our OPT record (DNS Flag Day 2020). */
export const OUR_UDP_SIZE = 1232;

/** A resource record ready for the wire: its owner is a pointer into the question, or a name. */
export interface WireRR {
  owner: number | string;
  type: number;
  ttl: number;
  /** RDLENGTH and RDATA, as dns-packet's record encoders write them. */
  rdata: Buffer;
}

const TYPE_NUMBER: Record<RRset["type"], number> = {
  A: TYPE.A,
  AAAA: TYPE.AAAA,
  CNAME: TYPE.CNAME,
  MX: TYPE.MX,
  TXT: TYPE.TXT,
};

export function typeNumberOf(set: RRset): number {
  return TYPE_NUMBER[set.type];
}

/**
 * The wire RRs of an RRset owned by `owner` (12: the question name). Encoded for each answer, not
 * kept: a cache keyed on the RRset object (a WeakMap) made every computed answer leave entries the
 * scavenger must copy and promote, and cost more than it saved (docs/dns.md, "Latency").
 */
export function rrsetToWire(set: RRset, owner: number | string): WireRR[] {
  const enc = codec.record(set.type);
  return (set.data as unknown[]).map((d) => ({
    owner,
    type: TYPE_NUMBER[set.type],
    ttl: set.ttl,
    rdata: enc.encode(d),
  }));
}

export function soaRdata(soa: Soa): Buffer {
  return codec.soa.encode(soa);
}

export function nameRdata(name: string): Buffer {
  return codec.ns.encode(name);
}

export interface ResponseParts {
  query: ParsedQuery;
  rcode: number;
  aa: boolean;
  tc?: boolean;
  answers?: WireRR[];
  authority?: WireRR[];
  /** Leave the question out (only when it cannot be echoed). */
  noQuestion?: boolean;
}

function ownerBytes(owner: number | string): Buffer {
  if (typeof owner === "number") return Buffer.from([0xc0 | (owner >> 8), owner & 0xff]);
  return codec.name.encode(owner);
}

function encodeRR(rr: WireRR): Buffer {
  const owner = ownerBytes(rr.owner);
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16BE(rr.type, 0);
  fixed.writeUInt16BE(1, 2);
  fixed.writeUInt32BE(rr.ttl >>> 0, 4);
  return Buffer.concat([owner, fixed, rr.rdata]);
}

function optBytes(edns: Edns, rcode: number): Buffer {
  const b = Buffer.alloc(11);
  b[0] = 0;
  b.writeUInt16BE(TYPE.OPT, 1);
  b.writeUInt16BE(OUR_UDP_SIZE, 3);
  b[5] = (rcode >> 4) & 0xff;
  b[6] = 0;
  b.writeUInt16BE(edns.dnssecOk ? 0x8000 : 0, 7);
  b.writeUInt16BE(0, 9);
  return b;
}

/**
 * Writes a response: header (QR, the query's RD and CD, AA, TC, rcode), the question exactly as
 * sent (0x20 case kept), the sections, and an OPT record when the query had one.
 */
export function buildResponse(p: ResponseParts): Buffer {
  const answers = (p.answers ?? []).map(encodeRR);
  const authority = (p.authority ?? []).map(encodeRR);
  const opt = p.query.edns ? [optBytes(p.query.edns, p.rcode)] : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(p.query.id, 0);
  let flags = 0x8000 | (p.query.opcode << 11) | (p.rcode & 0xf);
  if (p.aa) flags |= 0x0400;
  if (p.tc) flags |= 0x0200;
  if (p.query.rd) flags |= 0x0100;
  if (p.query.cd) flags |= 0x0010;
  header.writeUInt16BE(flags, 2);
  header.writeUInt16BE(p.noQuestion ? 0 : 1, 4);
  header.writeUInt16BE(answers.length, 6);
  header.writeUInt16BE(authority.length, 8);
  header.writeUInt16BE(opt.length, 10);
  return Buffer.concat([
    header,
    ...(p.noQuestion ? [] : [p.query.question.raw]),
    ...answers,
    ...authority,
    ...opt,
  ]);
}

/** A bare header answering a packet whose question could not be read (FORMERR, NOTIMP). */
export function buildHeaderOnly(id: number, opcode: number, rd: boolean, rcode: number): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x8000 | (opcode << 11) | (rd ? 0x0100 : 0) | (rcode & 0xf), 2);
  return header;
}
