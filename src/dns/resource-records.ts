import { isIPv4, isIPv6 } from "node:net";
import type { DomainRecord } from "../domain/types.js";
import { compareRecordKeys } from "../resolution/record-shape.js";
import { buildDnsName, isHostName } from "./dns-name.js";

/** The TTL of an RRset whose `record.<TYPE>.ttl` is absent or invalid. */
export const DEFAULT_TTL = 300;
/** A TXT value longer than this is skipped: a record a resolver would truncate anyway. */
export const MAX_TXT_BYTES = 4096;

export const SERVED_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT"] as const;
export type ServedType = (typeof SERVED_TYPES)[number];

export interface MxData {
  preference: number;
  exchange: string;
}

/** One RRset of a name, its data in dns-packet's shape (TXT: 255-byte chunks). */
export type RRset =
  | { type: "A" | "AAAA" | "CNAME"; ttl: number; data: string[] }
  | { type: "MX"; ttl: number; data: MxData[] }
  | { type: "TXT"; ttl: number; data: Buffer[][] };

export interface SkippedRecord {
  key: string;
  reason: string;
}

export interface NodeRRsets {
  rrsets: RRset[];
  skipped: SkippedRecord[];
}

/**
 * The key prefixes of every record `buildNodeRRsets` reads (RECORD_KEY, CONTENT_KEY, REDIRECT_KEY,
 * TOKEN_KEY below): the zone export reads only these records of the map, the others never change
 * a zone.
 */
export const ZONE_RECORD_KEYS = ["content.", "record.", "redirect.", "token."] as const;

const RECORD_KEY = /^record\.([A-Za-z0-9_-]+)\.(\d+|ttl)$/;
const CONTENT_KEY = /^content\.(IPFS|IPNS)\.\d+$/;
const REDIRECT_KEY = /^redirect\.WEBSITE\.\d+$/;
const TOKEN_KEY = /^(token\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)?)\.\d+$/;
const MAX_TTL = 2 ** 31 - 1;

function ttlOf(value: string): number | null {
  if (!/^\d{1,10}$/.test(value)) return null;
  const n = Number(value);
  return n <= MAX_TTL ? n : null;
}

/** A TXT string as RFC 1035 character-strings: at most 255 octets each. */
function txtChunks(text: string): Buffer[] {
  const bytes = Buffer.from(text, "utf8");
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length === 0 ? [Buffer.alloc(0)] : out;
}

function hostName(value: string): string | null {
  const r = buildDnsName(value.trim());
  return r.ok ? r.name : null;
}

function parseMx(value: string): MxData | null {
  const m = /^\s*(\d{1,5})\s+(\S+)\s*$/.exec(value);
  if (!m) return null;
  const preference = Number(m[1]);
  if (preference > 65535) return null;
  // "0 ." is the null MX of RFC 7505: the name accepts no mail.
  if (m[2] === ".") return { preference, exchange: "." };
  const exchange = hostName(m[2]);
  return exchange === null || !isHostName(exchange) ? null : { preference, exchange };
}

function canonicalIp(value: string, type: "A" | "AAAA"): string | null {
  const v = value.trim();
  if (type === "A") return isIPv4(v) ? v : null;
  if (!isIPv6(v)) return null;
  // One spelling per address so that duplicates collapse and zone files compare.
  return new URL(`http://[${v}]/`).hostname.slice(1, -1);
}

/**
 * The resource records of one domain, from its canonical records (docs/dns.md, "Records"):
 * A, AAAA, CNAME (`record.CNAME.0` only), MX and TXT from `record.<TYPE>.<n>`; more TXT from
 * `content.IPFS|IPNS` (`dnslink=/ipfs/…`), `redirect.WEBSITE` (`redirect=<url>`) and
 * `token.<SYMBOL>[.<VERSION>]` (`token.<SYMBOL>[.<VERSION>]=<address>`). A record that cannot be
 * served is skipped and reported, never emitted; `owner` (the DNS name) must be a host name for
 * A, AAAA and MX. A CNAME takes the name alone: the rest is
 * skipped (RFC 1034 §3.6.2).
 *
 * @example buildNodeRRsets([{ key: "record.A.0", value: "10.0.0.1", … }]).rrsets
 * // [{ type: "A", ttl: 300, data: ["10.0.0.1"] }]
 */
export function buildNodeRRsets(records: readonly DomainRecord[], owner?: string): NodeRRsets {
  // Address and mail records belong to host names only (RFC 1123; BIND refuses the zone otherwise).
  const hostOwner = owner === undefined || isHostName(owner);
  const sorted = [...records].sort((a, b) => compareRecordKeys(a.key, b.key));
  const ttls = new Map<string, number>();
  const skipped: SkippedRecord[] = [];
  for (const r of sorted) {
    const m = RECORD_KEY.exec(r.key);
    if (m && m[2] === "ttl") {
      const ttl = ttlOf(r.value.trim());
      if (ttl === null) skipped.push({ key: r.key, reason: "TTL is not an integer 0..2147483647" });
      else ttls.set(m[1].toUpperCase(), ttl);
    }
  }
  const values: Record<ServedType, Set<string>> = {
    A: new Set(),
    AAAA: new Set(),
    CNAME: new Set(),
    MX: new Set(),
    TXT: new Set(),
  };
  const mx: MxData[] = [];
  const txt: string[] = [];
  const cnameKeys: string[] = [];
  const otherKeys: string[] = [];
  const addTxt = (key: string, text: string) => {
    if (Buffer.byteLength(text, "utf8") > MAX_TXT_BYTES) {
      skipped.push({ key, reason: `TXT value over ${MAX_TXT_BYTES} bytes` });
      return;
    }
    if (values.TXT.has(text)) return;
    values.TXT.add(text);
    txt.push(text);
    otherKeys.push(key);
  };
  const dnsRecords: DomainRecord[] = [];
  const textRecords: DomainRecord[] = [];
  for (const r of sorted) (RECORD_KEY.test(r.key) ? dnsRecords : textRecords).push(r);

  for (const r of dnsRecords) {
    const m = RECORD_KEY.exec(r.key)!;
    if (m[2] === "ttl") continue;
    const type = m[1].toUpperCase();
    switch (type) {
      case "A":
      case "AAAA": {
        if (!hostOwner) {
          skipped.push({ key: r.key, reason: `${type} needs a host name as owner (no underscore)` });
          break;
        }
        const ip = canonicalIp(r.value, type);
        if (ip === null)
          skipped.push({ key: r.key, reason: `not an ${type === "A" ? "IPv4" : "IPv6"} address` });
        else if (!values[type].has(ip)) {
          values[type].add(ip);
          otherKeys.push(r.key);
        }
        break;
      }
      case "CNAME": {
        const target = m[2] === "0" ? hostName(r.value) : null;
        if (m[2] !== "0") skipped.push({ key: r.key, reason: "a name has one CNAME: only record.CNAME.0" });
        else if (target === null) skipped.push({ key: r.key, reason: "CNAME target is not a host name" });
        else {
          values.CNAME.add(target);
          cnameKeys.push(r.key);
        }
        break;
      }
      case "MX": {
        if (!hostOwner) {
          skipped.push({ key: r.key, reason: "MX needs a host name as owner (no underscore)" });
          break;
        }
        const data = parseMx(r.value);
        if (data === null) skipped.push({ key: r.key, reason: 'MX is not "<preference> <host name>"' });
        else {
          const id = `${data.preference} ${data.exchange}`;
          if (!values.MX.has(id)) {
            values.MX.add(id);
            mx.push(data);
            otherKeys.push(r.key);
          }
        }
        break;
      }
      case "TXT":
        addTxt(r.key, r.value);
        break;
      default:
        skipped.push({ key: r.key, reason: `record type ${type} is not served` });
    }
  }
  for (const r of textRecords) {
    const content = CONTENT_KEY.exec(r.key);
    if (content) {
      addTxt(r.key, `dnslink=/${content[1].toLowerCase()}/${r.value.trim()}`);
      continue;
    }
    if (REDIRECT_KEY.test(r.key)) {
      addTxt(r.key, `redirect=${r.value.trim()}`);
      continue;
    }
    const token = TOKEN_KEY.exec(r.key);
    if (token) addTxt(r.key, `${token[1]}=${r.value.trim()}`);
  }

  const ttl = (type: ServedType) => ttls.get(type) ?? DEFAULT_TTL;
  if (values.CNAME.size > 0) {
    for (const key of otherKeys) skipped.push({ key, reason: "beside a CNAME (a CNAME stands alone)" });
    return { rrsets: [{ type: "CNAME", ttl: ttl("CNAME"), data: [...values.CNAME] }], skipped };
  }
  const rrsets: RRset[] = [];
  if (values.A.size > 0) rrsets.push({ type: "A", ttl: ttl("A"), data: [...values.A] });
  if (values.AAAA.size > 0) rrsets.push({ type: "AAAA", ttl: ttl("AAAA"), data: [...values.AAAA] });
  if (mx.length > 0) rrsets.push({ type: "MX", ttl: ttl("MX"), data: mx });
  if (txt.length > 0) rrsets.push({ type: "TXT", ttl: ttl("TXT"), data: txt.map(txtChunks) });
  return { rrsets, skipped };
}
