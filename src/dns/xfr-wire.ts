import dnsPacket from "dns-packet";
import type { RRset } from "./resource-records.js";
import { TYPE } from "./wire-query.js";
import type { Soa } from "./zone.js";

/**
 * Wire helpers of the zone transfers and NOTIFY: reading every record of an untrusted message
 * (names may be compressed: pointers are followed backwards only, so there is no loop), and
 * writing RRs with uncompressed owner names.
 */

const MAX_NAME = 255;

/** A name read from the wire (pointers followed), lower case, no trailing dot ("" for the root). */
export function readWireName(
  buf: Buffer,
  start: number,
  limit = buf.length,
): { name: string; end: number } | null {
  const labels: string[] = [];
  let off = start;
  let end = -1;
  let wire = 1;
  let lowest = start;
  for (let n = 0; n < 128; n++) {
    if (off >= Math.min(limit, buf.length) && end === -1) return null;
    if (off >= buf.length) return null;
    const len = buf[off];
    if (len === 0) {
      if (end === -1) end = off + 1;
      return { name: labels.join(".").toLowerCase(), end };
    }
    if ((len & 0xc0) === 0xc0) {
      if (off + 2 > buf.length) return null;
      const target = ((len & 0x3f) << 8) | buf[off + 1];
      if (end === -1) end = off + 2;
      // Only backwards, and each time further back: no pointer loop.
      if (target >= lowest) return null;
      lowest = target;
      off = target;
      continue;
    }
    if (len > 63 || off + 1 + len > buf.length) return null;
    wire += len + 1;
    if (wire > MAX_NAME) return null;
    labels.push(buf.toString("latin1", off + 1, off + 1 + len));
    off += 1 + len;
  }
  return null;
}

/** A name in canonical wire form: lower case, uncompressed (RFC 4034 §6.2). */
export function wireName(name: string): Buffer {
  const trimmed = name.replace(/\.$/, "").toLowerCase();
  if (trimmed === "") return Buffer.from([0]);
  const parts = trimmed.split(".").map((l) => {
    const b = Buffer.from(l, "latin1");
    return Buffer.concat([Buffer.from([b.length]), b]);
  });
  return Buffer.concat([...parts, Buffer.from([0])]);
}

export interface WalkedRR {
  section: "answer" | "authority" | "additional";
  name: string;
  type: number;
  rrClass: number;
  ttl: number;
  /** Offset of the RR's first byte (its owner name). */
  start: number;
  rdata: number;
  rdlength: number;
}

export interface WalkedQuestion {
  name: string;
  type: number;
  qclass: number;
  /** The question's bytes as sent. */
  raw: Buffer;
}

/**
 * Every record of a message, checked against its length (null: truncated, counts past the end,
 * a bad name, or trailing bytes). `questions` holds QDCOUNT questions.
 */
export function walkMessage(buf: Buffer): (WalkedRR[] & { questions?: WalkedQuestion[] }) | null {
  if (buf.length < 12) return null;
  const counts = [4, 6, 8, 10].map((o) => buf.readUInt16BE(o));
  let off = 12;
  const questions: WalkedQuestion[] = [];
  for (let i = 0; i < counts[0]; i++) {
    const n = readWireName(buf, off);
    if (n === null || n.end + 4 > buf.length) return null;
    questions.push({
      name: n.name,
      type: buf.readUInt16BE(n.end),
      qclass: buf.readUInt16BE(n.end + 2),
      raw: buf.subarray(off, n.end + 4),
    });
    off = n.end + 4;
  }
  const out: WalkedRR[] & { questions?: WalkedQuestion[] } = [];
  const sections = ["answer", "authority", "additional"] as const;
  for (let s = 0; s < 3; s++)
    for (let i = 0; i < counts[s + 1]; i++) {
      const n = readWireName(buf, off);
      if (n === null || n.end + 10 > buf.length) return null;
      const rdlength = buf.readUInt16BE(n.end + 8);
      if (n.end + 10 + rdlength > buf.length) return null;
      out.push({
        section: sections[s],
        name: n.name,
        type: buf.readUInt16BE(n.end),
        rrClass: buf.readUInt16BE(n.end + 2),
        ttl: buf.readUInt32BE(n.end + 4),
        start: off,
        rdata: n.end + 10,
        rdlength,
      });
      off = n.end + 10 + rdlength;
    }
  if (off !== buf.length) return null;
  out.questions = questions;
  return out;
}

interface Encoder {
  encode(data: unknown): Buffer;
}
// dns-packet's per-type RDATA codecs (exported by the library, absent from its typings).
const codec = dnsPacket as unknown as { record(type: string): Encoder; soa: Encoder; ns: Encoder };

function rr(owner: string, type: number, ttl: number, rdata: Buffer): Buffer {
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(1, 2);
  fixed.writeUInt32BE(ttl >>> 0, 4);
  return Buffer.concat([wireName(owner), fixed, rdata]);
}

const TYPE_OF: Record<RRset["type"], number> = { A: 1, AAAA: 28, CNAME: 5, MX: 15, TXT: 16 };

/** The wire RRs (owner, type, class IN, TTL, RDLENGTH, RDATA) of one RRset. */
export function rrsetBytes(owner: string, set: RRset): Buffer[] {
  const enc = codec.record(set.type);
  return (set.data as unknown[]).map((d) => rr(owner, TYPE_OF[set.type], set.ttl, enc.encode(d)));
}

export function soaBytes(origin: string, ttl: number, soa: Soa): Buffer {
  return rr(origin, TYPE.SOA, ttl, codec.soa.encode(soa));
}

export function nsBytes(origin: string, ttl: number, host: string): Buffer {
  return rr(origin, TYPE.NS, ttl, codec.ns.encode(host));
}

/** The serial of an SOA RR's RDATA (two names, then the serial), or null. */
export function soaSerialAt(buf: Buffer, rdata: number, rdlength: number): number | null {
  const end = rdata + rdlength;
  const mname = readWireName(buf, rdata, end);
  if (mname === null) return null;
  const rname = readWireName(buf, mname.end, end);
  if (rname === null || rname.end + 20 !== end) return null;
  return buf.readUInt32BE(rname.end);
}
