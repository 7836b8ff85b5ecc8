import { createHmac, timingSafeEqual } from "node:crypto";
import { readWireName, walkMessage, wireName } from "./xfr-wire.js";

/**
 * TSIG (RFC 8945) with HMAC-SHA256, the one algorithm the zone transfers accept: verifying a
 * signed request, signing the answers (every message of a transfer), signing our NOTIFYs.
 * dns-packet has no TSIG codec; the framing below follows RFC 8945 §4.2–§5.3 and is checked
 * against NSD, Knot and kdig (test/dns/xfr-secondaries.test.ts, src/dns/tsig.test.ts).
 */

export const HMAC_SHA256 = "hmac-sha256";
const TYPE_TSIG = 250;
const CLASS_ANY = 255;
/** Seconds of clock difference accepted (RFC 8945 recommends 300). */
export const FUDGE = 300;
const MAC_BYTES = 32;

export const TSIG_ERROR = { NOERROR: 0, BADSIG: 16, BADKEY: 17, BADTIME: 18 } as const;
export const RCODE_NOTAUTH = 9;

export interface TsigKey {
  /** Lower case, no trailing dot. */
  name: string;
  secret: Buffer;
}

/**
 * Parses `DNS_TSIG_KEYS`: `name:hmac-sha256:base64secret`, comma-separated. Throws on a malformed
 * entry (the message never holds the secret).
 *
 * @example parseTsigKeys("xfr.omniname:hmac-sha256:c2VjcmV0c2VjcmV0") // [{ name: "xfr.omniname", secret: <Buffer> }]
 */
export function parseTsigKeys(value: string | undefined): TsigKey[] {
  const keys: TsigKey[] = [];
  for (const entry of (value ?? "").split(",")) {
    const text = entry.trim();
    if (text === "") continue;
    const [name, algorithm, secret, ...rest] = text.split(":");
    const label = name ?? "";
    if (rest.length > 0 || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/.test(label))
      throw new Error(`DNS_TSIG_KEYS: "${label}" is not name:hmac-sha256:base64secret`);
    if (algorithm?.toLowerCase() !== HMAC_SHA256)
      throw new Error(`DNS_TSIG_KEYS: key ${label}: only hmac-sha256 is supported`);
    if (secret === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(secret))
      throw new Error(`DNS_TSIG_KEYS: key ${label}: the secret is not base64`);
    const bytes = Buffer.from(secret, "base64");
    if (bytes.length < 16) throw new Error(`DNS_TSIG_KEYS: key ${label}: the secret is under 16 bytes`);
    const lower = label.toLowerCase().replace(/\.$/, "");
    if (keys.some((k) => k.name === lower)) throw new Error(`DNS_TSIG_KEYS: key ${label} is given twice`);
    keys.push({ name: lower, secret: bytes });
  }
  return keys;
}

/** A TSIG record read from a message. */
export interface TsigRecord {
  key: string;
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
  /** Where the TSIG RR starts: the signed message is the bytes before it (ARCOUNT − 1). */
  start: number;
}

export type TsigRead = { kind: "none" } | { kind: "malformed" } | { kind: "tsig"; tsig: TsigRecord };

/**
 * The TSIG record of a message: it must be the last additional record, and the only one
 * (RFC 8945 §5.1). A TSIG elsewhere, or one whose RDATA does not parse, is malformed (FORMERR).
 */
export function readTsig(msg: Buffer): TsigRead {
  const rrs = walkMessage(msg);
  if (rrs === null) return { kind: "malformed" };
  const at = rrs.findIndex((r) => r.type === TYPE_TSIG);
  if (at === -1) return { kind: "none" };
  const rr = rrs[at];
  if (at !== rrs.length - 1 || rr.section !== "additional" || rr.rrClass !== CLASS_ANY)
    return { kind: "malformed" };
  const end = rr.rdata + rr.rdlength;
  const alg = readWireName(msg, rr.rdata, end);
  if (alg === null || alg.end + 10 > end) return { kind: "malformed" };
  let off = alg.end;
  const timeSigned = msg.readUIntBE(off, 6);
  const fudge = msg.readUInt16BE(off + 6);
  const macSize = msg.readUInt16BE(off + 8);
  off += 10;
  if (off + macSize + 6 > end) return { kind: "malformed" };
  const mac = msg.subarray(off, off + macSize);
  off += macSize;
  const originalId = msg.readUInt16BE(off);
  const error = msg.readUInt16BE(off + 2);
  const otherLen = msg.readUInt16BE(off + 4);
  off += 6;
  if (off + otherLen !== end) return { kind: "malformed" };
  return {
    kind: "tsig",
    tsig: {
      key: rr.name.toLowerCase(),
      algorithm: alg.name.toLowerCase(),
      timeSigned,
      fudge,
      mac: Buffer.from(mac),
      originalId,
      error,
      other: Buffer.from(msg.subarray(off, end)),
      start: rr.start,
    },
  };
}

/** The message as it was before its TSIG was added: TSIG cut off, ARCOUNT − 1, the original ID. */
export function unsignedPart(msg: Buffer, tsig: TsigRecord): Buffer {
  const body = Buffer.from(msg.subarray(0, tsig.start));
  body.writeUInt16BE(tsig.originalId, 0);
  body.writeUInt16BE(body.readUInt16BE(10) - 1, 10);
  return body;
}

function u48(n: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUIntBE(n, 0, 6);
  return b;
}

/** The TSIG variables of RFC 8945 §4.3.3 (the full set), names in canonical form. */
function variables(key: string, time: number, fudge: number, error: number, other: Buffer): Buffer {
  const fixed = Buffer.alloc(6);
  fixed.writeUInt16BE(CLASS_ANY, 0);
  fixed.writeUInt32BE(0, 2);
  const tail = Buffer.alloc(6);
  tail.writeUInt16BE(fudge, 0);
  tail.writeUInt16BE(error, 2);
  tail.writeUInt16BE(other.length, 4);
  return Buffer.concat([wireName(key), fixed, wireName(HMAC_SHA256), u48(time), tail, other]);
}

function lengthPrefixed(mac: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(mac.length, 0);
  return Buffer.concat([len, mac]);
}

function hmac(key: TsigKey, parts: Buffer[]): Buffer {
  const h = createHmac("sha256", key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Appends a TSIG RR to a message (ARCOUNT + 1). */
function appendTsig(
  msg: Buffer,
  key: string,
  time: number,
  mac: Buffer,
  originalId: number,
  error: number,
  other: Buffer,
  algorithm: string = HMAC_SHA256,
): Buffer {
  const owner = wireName(key);
  const alg = wireName(algorithm);
  const rdata = Buffer.alloc(alg.length + 16 + mac.length + other.length);
  let off = alg.copy(rdata, 0);
  rdata.writeUIntBE(time, off, 6);
  rdata.writeUInt16BE(FUDGE, off + 6);
  rdata.writeUInt16BE(mac.length, off + 8);
  off += 10 + mac.copy(rdata, off + 10);
  rdata.writeUInt16BE(originalId, off);
  rdata.writeUInt16BE(error, off + 2);
  rdata.writeUInt16BE(other.length, off + 4);
  other.copy(rdata, off + 6);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(TYPE_TSIG, 0);
  fixed.writeUInt16BE(CLASS_ANY, 2);
  fixed.writeUInt32BE(0, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  const out = Buffer.concat([msg, owner, fixed, rdata]);
  out.writeUInt16BE(out.readUInt16BE(10) + 1, 10);
  return out;
}

export type TsigCheck =
  | { ok: true; key: TsigKey; tsig: TsigRecord }
  /** NOTAUTH with this TSIG error; `tsig` is what was received (to echo its key name and ID). */
  | { ok: false; error: number; tsig: TsigRecord; key: TsigKey | null };

/**
 * Checks a request's TSIG against the keys (RFC 8945 §5.2): an unknown key or algorithm is
 * BADKEY, a MAC that does not match (or of a size §5.2.2.1 refuses) is BADSIG, a time outside
 * the fudge is BADTIME. The MAC is compared in constant time.
 */
export function verifyRequest(
  msg: Buffer,
  tsig: TsigRecord,
  keys: readonly TsigKey[],
  now: number,
): TsigCheck {
  const key = keys.find((k) => k.name === tsig.key.replace(/\.$/, "")) ?? null;
  if (key === null || tsig.algorithm.replace(/\.$/, "") !== HMAC_SHA256)
    return { ok: false, error: TSIG_ERROR.BADKEY, tsig, key: null };
  const expected = hmac(key, [
    unsignedPart(msg, tsig),
    variables(key.name, tsig.timeSigned, tsig.fudge, tsig.error, tsig.other),
  ]);
  const size = tsig.mac.length;
  // A truncated MAC is accepted down to half the output and 10 bytes, never below (RFC 8945 §5.2.2.1).
  if (
    size > MAC_BYTES ||
    size < Math.max(10, MAC_BYTES / 2) ||
    !timingSafeEqual(expected.subarray(0, size), tsig.mac)
  )
    return { ok: false, error: TSIG_ERROR.BADSIG, tsig, key: null };
  if (Math.abs(Math.floor(now / 1000) - tsig.timeSigned) > tsig.fudge)
    return { ok: false, error: TSIG_ERROR.BADTIME, tsig, key };
  return { ok: true, key, tsig };
}

/**
 * Signs the messages of one answer in order (RFC 8945 §5.3): the first with the request's MAC,
 * each next one with the MAC before it and only the timers. Every message is signed.
 */
export class ResponseSigner {
  private previous: Buffer;
  private first = true;

  constructor(
    private readonly key: TsigKey,
    requestMac: Buffer,
    private readonly originalId: number,
    private readonly now: () => number,
  ) {
    this.previous = requestMac;
  }

  sign(msg: Buffer): Buffer {
    const time = Math.floor(this.now() / 1000);
    let mac: Buffer;
    if (this.first) {
      mac = hmac(this.key, [
        lengthPrefixed(this.previous),
        msg,
        variables(this.key.name, time, FUDGE, 0, Buffer.alloc(0)),
      ]);
      this.first = false;
    } else {
      const timers = Buffer.alloc(8);
      timers.writeUIntBE(time, 0, 6);
      timers.writeUInt16BE(FUDGE, 6);
      mac = hmac(this.key, [lengthPrefixed(this.previous), msg, timers]);
    }
    this.previous = mac;
    return appendTsig(msg, this.key.name, time, mac, this.originalId, 0, Buffer.alloc(0));
  }
}

/**
 * A NOTAUTH answer's TSIG (RFC 8945 §5.2.2–5.2.3): BADKEY and BADSIG go unsigned (MAC size 0);
 * BADTIME is signed with the request's MAC and carries our time in its other data. The unsigned
 * ones repeat the request's key name and algorithm as sent (§5.2): a client matches the answer's
 * TSIG to its request by both, and dig reports an answer naming another algorithm (an
 * hmac-sha512 request answered as hmac-sha256) as a failed verification, not as BADKEY.
 */
export function errorTsig(msg: Buffer, check: Extract<TsigCheck, { ok: false }>, now: number): Buffer {
  const time = Math.floor(now / 1000);
  const id = check.tsig.originalId;
  if (check.error !== TSIG_ERROR.BADTIME || check.key === null)
    return appendTsig(
      msg,
      check.tsig.key.replace(/\.$/, ""),
      check.tsig.timeSigned,
      Buffer.alloc(0),
      id,
      check.error,
      Buffer.alloc(0),
      check.tsig.algorithm.replace(/\.$/, ""),
    );
  const other = u48(time);
  const mac = hmac(check.key, [
    lengthPrefixed(check.tsig.mac),
    msg,
    variables(check.key.name, time, FUDGE, check.error, other),
  ]);
  return appendTsig(msg, check.key.name, time, mac, id, check.error, other);
}

/** Signs a request (our NOTIFY): the MAC over the message and the TSIG variables. */
export function signRequest(msg: Buffer, key: TsigKey, now: number): { packet: Buffer; mac: Buffer } {
  const time = Math.floor(now / 1000);
  const mac = hmac(key, [msg, variables(key.name, time, FUDGE, 0, Buffer.alloc(0))]);
  return { packet: appendTsig(msg, key.name, time, mac, msg.readUInt16BE(0), 0, Buffer.alloc(0)), mac };
}

/** Checks the TSIG of an answer to a request we signed (the NOTIFY's answer). */
export function verifyResponse(msg: Buffer, key: TsigKey, requestMac: Buffer): boolean {
  const read = readTsig(msg);
  if (read.kind !== "tsig" || read.tsig.key.replace(/\.$/, "") !== key.name || read.tsig.error !== 0)
    return false;
  const t = read.tsig;
  const expected = hmac(key, [
    lengthPrefixed(requestMac),
    unsignedPart(msg, t),
    variables(key.name, t.timeSigned, t.fudge, t.error, t.other),
  ]);
  return t.mac.length === MAC_BYTES && timingSafeEqual(expected, t.mac);
}
