import { sign } from "node:crypto";
import { OldestEntries } from "../domain/oldest-entries.js";
import { canonicalNameWire, DNSSEC_ALGORITHM, type DnssecKey, type DnssecKeys } from "./dnssec-keys.js";

export const TYPE_RRSIG = 46;
export const TYPE_NSEC = 47;
export const TYPE_DNSKEY = 48;
/** The NXNAME pseudo-type of compact denial of existence (RFC 9824). */
export const TYPE_NXNAME = 128;

/** A signature's inception is this far in the past (clock skew between us and validators). */
export const SIGNATURE_INCEPTION_SKEW_S = 3600;
/** A signature expires this long after it is made (docs/dns.md, "DNSSEC"). */
export const SIGNATURE_VALIDITY_S = 7 * 86_400;
/** A cached signature is made again once it is this old: a served one always has six days left. */
export const SIGNATURE_REFRESH_MS = 86_400_000;
/**
 * RRsets whose signatures are kept (about 300 bytes each: some 15 MB), as many as the answer cache
 * holds answers; past it the least recently used goes (a flood of distinct names only cycles it).
 */
export const SIGNATURE_CACHE_ENTRIES = 50_000;

/** One RRset to sign: owner without the trailing dot (any case), RDATA in canonical form without RDLENGTH. */
export interface SignableRRset {
  owner: string;
  type: number;
  ttl: number;
  rdatas: readonly Buffer[];
}

export interface Signature {
  /** RRSIG RDATA without RDLENGTH. */
  rdata: Buffer;
  /** When it was made (ms): the answer it is in may be kept until `signedAt + SIGNATURE_REFRESH_MS`. */
  signedAt: number;
}

/** RFC 4034 §3.1.3: the owner's labels, the root and a leading wildcard label not counted. */
function labelCount(owner: string): number {
  if (owner === "") return 0;
  const labels = owner.split(".");
  return labels[0] === "*" ? labels.length - 1 : labels.length;
}

/** The RRSIG RDATA of one RRset by one key at one time (RFC 4034 §3.1.8.1 canonical signed data). */
export function buildRrsig(zone: string, set: SignableRRset, key: DnssecKey, nowS: number): Buffer {
  const signer = canonicalNameWire(zone);
  const head = Buffer.alloc(18);
  head.writeUInt16BE(set.type, 0);
  head[2] = DNSSEC_ALGORITHM;
  head[3] = labelCount(set.owner);
  head.writeUInt32BE(set.ttl >>> 0, 4);
  head.writeUInt32BE((nowS + SIGNATURE_VALIDITY_S) >>> 0, 8);
  head.writeUInt32BE((nowS - SIGNATURE_INCEPTION_SKEW_S) >>> 0, 12);
  head.writeUInt16BE(key.keyTag, 16);
  const owner = canonicalNameWire(set.owner);
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16BE(set.type, 0);
  fixed.writeUInt16BE(1, 2);
  fixed.writeUInt32BE(set.ttl >>> 0, 4);
  // RRs in canonical order: their RDATA compared as left-justified octet strings (§6.3).
  const sorted = [...set.rdatas].sort(Buffer.compare);
  const parts: Buffer[] = [head, signer];
  for (const rdata of sorted) {
    const len = Buffer.alloc(2);
    len.writeUInt16BE(rdata.length, 0);
    parts.push(owner, fixed, len, rdata);
  }
  const signature = sign("sha256", Buffer.concat(parts), { key: key.privateKey, dsaEncoding: "ieee-p1363" });
  return Buffer.concat([head, signer, signature]);
}

/**
 * Online signing with a bounded cache: an RRset's signatures are made once and reused until they
 * are a day old (SIGNATURE_REFRESH_MS), so hot answers are not signed per query. The cache is keyed
 * by the RRset's content (owner, type, TTL, RDATA): a changed RRset is a new key, its old entry
 * ages out; at SIGNATURE_CACHE_ENTRIES the least recently used goes. New keys (a restart) start
 * empty.
 *
 * @example new DnssecSigner(keys, Date.now).sign("wallet", { owner: "alice.wallet", type: 1, ttl: 300, rdatas })
 */
export class DnssecSigner {
  private readonly cache = new Map<string, Signature[]>();
  private readonly oldest = new OldestEntries(this.cache);
  signed = 0;
  hits = 0;

  constructor(
    readonly keys: DnssecKeys,
    private readonly clock: () => number,
    private readonly maxEntries = SIGNATURE_CACHE_ENTRIES,
  ) {}

  get size(): number {
    return this.cache.size;
  }

  /** The signatures of an RRset, one by each key (a rollover signs twice: docs/dns.md). */
  sign(zone: string, set: SignableRRset): Signature[] {
    const now = this.clock();
    let key = `${zone} ${set.owner.replace(/[A-Z]+/g, (c) => c.toLowerCase())} ${set.type} ${set.ttl}`;
    for (const r of set.rdatas) key += ` ${r.length}:${r.toString("latin1")}`;
    const cached = this.cache.get(key);
    if (
      cached !== undefined &&
      now < cached[0].signedAt + SIGNATURE_REFRESH_MS &&
      now >= cached[0].signedAt
    ) {
      this.hits++;
      // Least recently used goes first: a hit moves to the end of the map's order.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const nowS = Math.floor(now / 1000);
    const out = this.keys.keys.map((k) => ({ rdata: buildRrsig(zone, set, k, nowS), signedAt: now }));
    this.signed += out.length;
    this.cache.delete(key);
    if (this.maxEntries <= 0) return out;
    if (this.cache.size >= this.maxEntries) this.oldest.drop();
    this.cache.set(key, out);
    return out;
  }
}

/** An NSEC type bitmap (RFC 4034 §4.1.2) of the given types. */
export function typeBitmap(types: readonly number[]): Buffer {
  const windows = new Map<number, Buffer>();
  for (const t of types) {
    const w = t >> 8;
    let bits = windows.get(w);
    if (bits === undefined) {
      bits = Buffer.alloc(32);
      windows.set(w, bits);
    }
    bits[(t & 0xff) >> 3] |= 0x80 >> (t & 7);
  }
  const parts: Buffer[] = [];
  for (const w of [...windows.keys()].sort((a, b) => a - b)) {
    const bits = windows.get(w)!;
    let len = 32;
    while (len > 0 && bits[len - 1] === 0) len--;
    parts.push(Buffer.from([w, len]), bits.subarray(0, len));
  }
  return Buffer.concat(parts);
}

/** NSEC RDATA: the next name (canonical wire) and the bitmap. */
export function nsecRdata(next: string | Buffer, types: readonly number[]): Buffer {
  return Buffer.concat([typeof next === "string" ? canonicalNameWire(next) : next, typeBitmap(types)]);
}

/**
 * The next name of a compact-denial NSEC (RFC 9824 §3.1): `\000.owner`, the name right after the
 * owner in canonical order; the owner itself when that would be longer than 255 octets.
 */
export function compactNextName(owner: string): Buffer {
  const wire = canonicalNameWire(owner);
  return wire.length + 2 <= 255 ? Buffer.concat([Buffer.from([1, 0]), wire]) : wire;
}
