/**
 * ENSIP-7 contenthash decoding: `<protocol multicodec varint><value>`. The value of ipfs-ns,
 * ipns-ns and swarm-ns is a binary CID; it is rendered the way UNS stores content keys, so both
 * providers map to the same canonical values:
 *
 * | multicodec        | canonical          | value                                               |
 * |-------------------|--------------------|-----------------------------------------------------|
 * | ipfs-ns 0xe3      | content.IPFS.0     | CIDv0 `Qm…` for dag-pb/sha2-256, else CIDv1 base32 `b…` |
 * | ipns-ns 0xe5      | content.IPNS.0     | CIDv1 base36 `k…`; an identity DNSLink name as text |
 * | swarm-ns 0xe4     | content.SWARM.0    | the keccak-256 manifest hash, 64 hex digits         |
 * | onion 0x01bc, onion3 0x01bd | content.ONION.0 | the onion address text                         |
 * | skynet-ns 0xb19910 | content.SKYNET.0  | base64url                                           |
 * | arweave-ns 0xb29910 | content.ARWEAVE.0 | base64url (the transaction id)                     |
 */

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** Big-number base conversion (base58btc, base36): leading zero bytes become leading zero digits. */
function encodeBaseX(bytes: Uint8Array, alphabet: string): string {
  const base = alphabet.length;
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i];
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j] << 8;
      digits[j] = carry % base;
      carry = (carry / base) | 0;
    }
    while (carry > 0) {
      digits.push(carry % base);
      carry = (carry / base) | 0;
    }
  }
  let out = alphabet[0].repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += alphabet[digits[i]];
  return out;
}

/** RFC 4648 base32, lower case, no padding (multibase `b`). */
function encodeBase32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Unsigned LEB128 varint at `offset`: [value, next offset], or null when truncated or too long. */
function readVarint(bytes: Uint8Array, offset: number): [number, number] | null {
  let value = 0;
  for (let shift = 0, i = offset; i < bytes.length && shift < 35; shift += 7, i++) {
    value += (bytes[i] & 0x7f) * 2 ** shift;
    if ((bytes[i] & 0x80) === 0) return [value, i + 1];
  }
  return null;
}

const DAG_PB = 0x70;
const LIBP2P_KEY = 0x72;
const RAW = 0x55;
const SHA2_256 = 0x12;
const IDENTITY = 0x00;

interface Cid {
  version: 0 | 1;
  codec: number;
  hashCode: number;
  digest: Uint8Array;
  bytes: Uint8Array;
}

/** Parses a binary CID (v0 = a bare sha2-256 multihash, or v1) that spans all of `bytes`. */
function parseCid(bytes: Uint8Array): Cid | null {
  if (bytes.length === 34 && bytes[0] === SHA2_256 && bytes[1] === 32) {
    return { version: 0, codec: DAG_PB, hashCode: SHA2_256, digest: bytes.subarray(2), bytes };
  }
  const version = readVarint(bytes, 0);
  if (version === null || version[0] !== 1) return null;
  const codec = readVarint(bytes, version[1]);
  if (codec === null) return null;
  const hash = readVarint(bytes, codec[1]);
  if (hash === null) return null;
  const len = readVarint(bytes, hash[1]);
  if (len === null || len[1] + len[0] !== bytes.length) return null;
  return { version: 1, codec: codec[0], hashCode: hash[0], digest: bytes.subarray(len[1]), bytes };
}

function ipfsValue(cid: Cid): string {
  if (cid.codec === DAG_PB && cid.hashCode === SHA2_256 && cid.digest.length === 32) {
    const v0 = new Uint8Array(34);
    v0[0] = SHA2_256;
    v0[1] = 32;
    v0.set(cid.digest, 2);
    return encodeBaseX(v0, BASE58);
  }
  return `b${encodeBase32(cid.bytes)}`;
}

function ipnsValue(cid: Cid): string | null {
  if (cid.version === 1 && cid.codec === RAW && cid.hashCode === IDENTITY) {
    // A DNSLink name (e.g. app.ens.eth) stored as an identity "hash".
    const text = Buffer.from(cid.digest).toString("utf8");
    return /^[\x21-\x7e]+$/.test(text) ? text : null;
  }
  if (cid.version === 1 && cid.codec === LIBP2P_KEY) return `k${encodeBaseX(cid.bytes, BASE36)}`;
  return cid.version === 1 ? `b${encodeBase32(cid.bytes)}` : encodeBaseX(cid.bytes, BASE58);
}

const PROTOCOLS: Record<number, string> = {
  227: "IPFS",
  229: "IPNS",
  228: "SWARM",
  444: "ONION",
  445: "ONION",
  11639056: "SKYNET",
  11704592: "ARWEAVE",
};

/**
 * Decodes contenthash bytes to a canonical protocol and value, or null when the codec is unknown
 * or the payload malformed (the record then stays under its native key).
 *
 * @example decodeContenthash(hexToBytes("0xe3010170122029f2d17b…")) // { protocol: "IPFS", value: "QmRAQB6Y…" }
 */
export function decodeContenthash(bytes: Uint8Array): { protocol: string; value: string } | null {
  const head = readVarint(bytes, 0);
  if (head === null) return null;
  const protocol = PROTOCOLS[head[0]];
  const payload = bytes.subarray(head[1]);
  if (protocol === undefined || payload.length === 0) return null;
  switch (protocol) {
    case "IPFS": {
      const cid = parseCid(payload);
      return cid === null ? null : { protocol, value: ipfsValue(cid) };
    }
    case "IPNS": {
      const cid = parseCid(payload);
      const value = cid === null ? null : ipnsValue(cid);
      return value === null ? null : { protocol, value };
    }
    case "SWARM": {
      const cid = parseCid(payload);
      if (cid === null || cid.digest.length !== 32) return null;
      return { protocol, value: Buffer.from(cid.digest).toString("hex") };
    }
    case "ONION": {
      const text = Buffer.from(payload).toString("latin1");
      return /^[a-z2-7]{16}$|^[a-z2-7]{56}$/.test(text) ? { protocol, value: text } : null;
    }
    default:
      return { protocol, value: Buffer.from(payload).toString("base64url") };
  }
}
