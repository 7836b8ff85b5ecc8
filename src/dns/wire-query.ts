/**
 * Parses a DNS query from the wire without trusting a byte of it: every count and length is
 * checked against the packet, names in the question may not use compression (so there is no
 * pointer to follow and no loop), and names elsewhere are only skipped, never followed.
 */

export const RCODE = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
} as const;
export const TYPE = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  OPT: 41,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
} as const;
export const CLASS_IN = 1;
const MAX_WIRE_NAME = 255;

export interface Edns {
  udpSize: number;
  version: number;
  /** The DO bit, copied into the answer (RFC 3225). */
  dnssecOk: boolean;
}

export interface Question {
  /** The name as sent, labels joined by dots, bytes as Latin-1 (case kept: 0x20). */
  name: string;
  /** Each label's absolute offset in the packet (for compression pointers back to it). */
  labelOffsets: number[];
  type: number;
  qclass: number;
  /** The question's bytes (name, type, class) exactly as sent. */
  raw: Buffer;
}

export interface ParsedQuery {
  id: number;
  opcode: number;
  rd: boolean;
  cd: boolean;
  question: Question;
  edns: Edns | null;
}

export type QueryParse =
  | { kind: "query"; query: ParsedQuery }
  /** Not answerable: shorter than a header, or a response (answering would loop). */
  | { kind: "drop" }
  /** Answered with an rcode and no question (FORMERR, NOTIMP). */
  | { kind: "error"; id: number; opcode: number; rd: boolean; rcode: number };

function parseQuestion(buf: Buffer, start: number): { question: Question; end: number } | null {
  let off = start;
  const labels: string[] = [];
  const labelOffsets: number[] = [];
  let wire = 1;
  for (;;) {
    if (off >= buf.length) return null;
    const len = buf[off];
    if (len === 0) {
      off++;
      break;
    }
    // A compression pointer or a reserved label type in the question: no query needs one.
    if (len > 63) return null;
    if (off + 1 + len > buf.length) return null;
    wire += len + 1;
    if (wire > MAX_WIRE_NAME) return null;
    labelOffsets.push(off);
    labels.push(buf.toString("latin1", off + 1, off + 1 + len));
    off += 1 + len;
  }
  if (off + 4 > buf.length) return null;
  const type = buf.readUInt16BE(off);
  const qclass = buf.readUInt16BE(off + 2);
  off += 4;
  return {
    question: { name: labels.join("."), labelOffsets, type, qclass, raw: buf.subarray(start, off) },
    end: off,
  };
}

/** Offset after a name, which may end in a pointer; the pointer is not followed. */
function skipName(buf: Buffer, start: number): number | null {
  let off = start;
  for (let n = 0; n < 128; n++) {
    if (off >= buf.length) return null;
    const len = buf[off];
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) return off + 2 <= buf.length ? off + 2 : null;
    if (len > 63) return null;
    off += 1 + len;
  }
  return null;
}

function validOptions(buf: Buffer, start: number, end: number): boolean {
  let off = start;
  while (off < end) {
    if (off + 4 > end) return false;
    off += 4 + buf.readUInt16BE(off + 2);
  }
  return off === end;
}

/**
 * Classifies a packet: a query to answer, an error to answer with a bare header, or nothing.
 *
 * @example parseQuery(packet) // { kind: "query", query: { id, question: { name: "alice.wallet", type: 1, … }, edns: null } }
 */
export function parseQuery(buf: Buffer): QueryParse {
  if (buf.length < 12) return { kind: "drop" };
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  if (flags & 0x8000) return { kind: "drop" };
  const opcode = (flags >> 11) & 0xf;
  const rd = (flags & 0x0100) !== 0;
  const error = (rcode: number): QueryParse => ({ kind: "error", id, opcode, rd, rcode });
  if (opcode !== 0) return error(RCODE.NOTIMP);
  const qd = buf.readUInt16BE(4);
  const an = buf.readUInt16BE(6);
  const ns = buf.readUInt16BE(8);
  const ar = buf.readUInt16BE(10);
  if (qd !== 1 || an !== 0 || ns > 1) return error(RCODE.FORMERR);
  const parsed = parseQuestion(buf, 12);
  if (parsed === null) return error(RCODE.FORMERR);
  let off = parsed.end;
  // An IXFR carries the client's SOA in its authority section (RFC 1995 §3), and only an IXFR
  // carries one: it is skipped (the UDP answer is our SOA whatever the client holds).
  const isIxfr = parsed.question.type === TYPE.IXFR;
  if (isIxfr !== (ns === 1)) return error(RCODE.FORMERR);
  if (isIxfr) {
    const afterName = skipName(buf, off);
    if (afterName === null || afterName + 10 > buf.length || buf.readUInt16BE(afterName) !== TYPE.SOA)
      return error(RCODE.FORMERR);
    off = afterName + 10 + buf.readUInt16BE(afterName + 8);
    if (off > buf.length) return error(RCODE.FORMERR);
  }
  let edns: Edns | null = null;
  for (let i = 0; i < ar; i++) {
    const nameStart = off;
    const afterName = skipName(buf, off);
    if (afterName === null || afterName + 10 > buf.length) return error(RCODE.FORMERR);
    const type = buf.readUInt16BE(afterName);
    const rrClass = buf.readUInt16BE(afterName + 2);
    const ttl = buf.readUInt32BE(afterName + 4);
    const rdlen = buf.readUInt16BE(afterName + 8);
    const rdata = afterName + 10;
    if (rdata + rdlen > buf.length) return error(RCODE.FORMERR);
    if (type === TYPE.OPT) {
      // One OPT, owned by the root, with well-formed options (RFC 6891 §6.1.1).
      if (edns !== null || afterName !== nameStart + 1 || buf[nameStart] !== 0) return error(RCODE.FORMERR);
      if (!validOptions(buf, rdata, rdata + rdlen)) return error(RCODE.FORMERR);
      edns = { udpSize: rrClass, version: (ttl >>> 16) & 0xff, dnssecOk: (ttl & 0x8000) !== 0 };
    }
    off = rdata + rdlen;
  }
  if (off !== buf.length) return error(RCODE.FORMERR);
  return {
    kind: "query",
    query: { id, opcode, rd, cd: (flags & 0x0010) !== 0, question: parsed.question, edns },
  };
}
