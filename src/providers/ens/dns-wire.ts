import dnsPacket from "dns-packet";

/**
 * DNS wire format as ENS uses it: NameWrapper's `NameWrapped(name)` and DNSResolver's owner names
 * are wire-encoded names, and `DNSRecordChanged.record` is a run of wire-format RRs (one RRset).
 * All of it is attacker-controlled: decoders return `null` instead of throwing.
 */

/**
 * The labels of an uncompressed wire-encoded name (length-prefixed labels ending with a zero byte),
 * or null when malformed: truncated, compressed, trailing bytes, an empty label before the end.
 * Labels are UTF-8 (ENS names are Unicode); the root name gives [].
 */
function decodeWireName(bytes: Uint8Array): string[] | null {
  if (bytes.length === 0 || bytes.length > 1024) return null;
  const labels: string[] = [];
  let i = 0;
  for (;;) {
    if (i >= bytes.length) return null;
    const len = bytes[i];
    if (len === 0) return i + 1 === bytes.length ? labels : null;
    // 0xc0 pointers (compression) and the reserved 0x40/0x80 forms never appear in these names.
    if (len > 63 || i + 1 + len > bytes.length) return null;
    labels.push(Buffer.from(bytes.buffer, bytes.byteOffset + i + 1, len).toString("utf8"));
    i += 1 + len;
  }
}

/** {@link decodeWireName} of hex digits (no 0x), refusing oversized input before allocating. */
export function decodeWireNameHex(hex: string): string[] | null {
  if (hex.length === 0 || hex.length > 2048 || hex.length % 2 !== 0) return null;
  return decodeWireName(Buffer.from(hex, "hex"));
}

const TYPE_NAMES: Record<number, string> = {
  1: "A",
  2: "NS",
  5: "CNAME",
  6: "SOA",
  12: "PTR",
  13: "HINFO",
  15: "MX",
  16: "TXT",
  28: "AAAA",
  29: "LOC",
  33: "SRV",
  35: "NAPTR",
  39: "DNAME",
  43: "DS",
  44: "SSHFP",
  48: "DNSKEY",
  52: "TLSA",
  64: "SVCB",
  65: "HTTPS",
  99: "SPF",
  257: "CAA",
};

/** The mnemonic of an RR type, or the RFC 3597 generic form `TYPE<n>`. */
export function dnsTypeName(type: number): string {
  return TYPE_NAMES[type] ?? `TYPE${type}`;
}

interface DecodedAnswer {
  name: string;
  type: string;
  ttl?: number;
  data: unknown;
}

// @types/dns-packet does not declare the single-RR codec the package exports.
const answerCodec = (
  dnsPacket as unknown as { answer: { decode(buf: Buffer, offset?: number): DecodedAnswer } }
).answer;
const answerBytes = (dnsPacket as unknown as { answer: { decode: { bytes: number } } }).answer.decode;

function renderData(type: string, data: unknown): string | null {
  switch (type) {
    case "A":
    case "AAAA":
    case "CNAME":
    case "NS":
    case "PTR":
    case "DNAME":
      return typeof data === "string" ? data : null;
    case "TXT": {
      // Character-strings of one TXT RR are one value split in ≤255-byte chunks: join them.
      const parts = Array.isArray(data) ? data : [data];
      return parts.map((p) => (Buffer.isBuffer(p) ? p.toString("utf8") : String(p))).join("");
    }
    case "MX": {
      const mx = data as { preference: number; exchange: string };
      return `${mx.preference} ${mx.exchange}`;
    }
    case "SRV": {
      const srv = data as { priority: number; weight: number; port: number; target: string };
      return `${srv.priority} ${srv.weight} ${srv.port} ${srv.target}`;
    }
    case "CAA": {
      const caa = data as { flags: number; tag: string; value: string };
      return `${caa.flags} ${caa.tag} "${caa.value}"`;
    }
    default:
      return null;
  }
}

export interface RenderedRRset {
  /** Presentation value of each RR, in order (A: "10.0.0.1", MX: "10 mx.example", TXT: joined text). */
  values: string[];
  /** TTL of the first RR. */
  ttl: number;
}

/** Most RRs one DNSRecordChanged may map to; a larger set stays native. */
export const MAX_RRSET = 64;

/**
 * Decodes a run of wire-format RRs of one type. Null when the bytes are malformed, a record is of
 * another type than `type`, or the type has no presentation rendering here (the key then stays native).
 */
export function renderRRset(wire: Uint8Array, type: string): RenderedRRset | null {
  const buf = Buffer.from(wire.buffer, wire.byteOffset, wire.length);
  const values: string[] = [];
  let ttl = 0;
  let offset = 0;
  try {
    while (offset < buf.length) {
      if (values.length >= MAX_RRSET) return null;
      const rr = answerCodec.decode(buf, offset);
      const used = answerBytes.bytes;
      if (used <= 0) return null;
      offset += used;
      if (rr.type !== type) return null;
      const value = renderData(type, rr.data);
      if (value === null) return null;
      if (values.length === 0) ttl = rr.ttl ?? 0;
      values.push(value);
    }
  } catch {
    return null;
  }
  return values.length > 0 && offset === buf.length ? { values, ttl } : null;
}
