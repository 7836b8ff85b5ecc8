/**
 * UNS native record keys → canonical keys (docs/records.md). Rules, in order; the first that applies wins,
 * and a key no rule maps (or a value a rule cannot parse) is kept under its native name:
 *
 * | UNS key                                  | canonical                          |
 * |------------------------------------------|------------------------------------|
 * | crypto.<T>.address                       | token.<T>.0                        |
 * | crypto.<T>.version.<V>.address           | token.<T>.<V>.0 (chain between symbol and index) |
 * | browser.redirect_url                     | redirect.WEBSITE.0                 |
 * | dns.<TYPE> (JSON array of strings)       | record.<TYPE>.0 … record.<TYPE>.n  |
 * | dns.<TYPE>.ttl (integer)                 | record.<TYPE>.ttl                  |
 * | whois.email.value                        | profile.OWNER.email                |
 * | social.picture.value                     | profile.OWNER.avatar               |
 * | social.<platform>.username               | social.<PLATFORM>.0                |
 * | ipfs.html.value, dweb.ipfs.hash          | content.IPFS.0                     |
 * | dweb.bzz.hash                            | content.SWARM.0                    |
 * | dweb.arweave.hash                        | content.ARWEAVE.0                  |
 */

type Mapped = Array<{ key: string; value: string }>;

const FIXED: Record<string, string> = {
  "browser.redirect_url": "redirect.WEBSITE.0",
  "whois.email.value": "profile.OWNER.email",
  "social.picture.value": "profile.OWNER.avatar",
  "ipfs.html.value": "content.IPFS.0",
  "dweb.ipfs.hash": "content.IPFS.0",
  "dweb.bzz.hash": "content.SWARM.0",
  "dweb.arweave.hash": "content.ARWEAVE.0",
};

// Symbols, versions, DNS types and platforms become key segments: letters, digits, `_` and `-` only,
// so a hostile key cannot inject extra dots into the canonical form.
const SEGMENT = /^[A-Za-z0-9_-]{1,32}$/;
/** More entries than this in one dns.<TYPE> array is not a real RRset: the key stays native. */
export const MAX_DNS_ENTRIES = 64;

function mapDnsArray(type: string, value: string): Mapped | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length > MAX_DNS_ENTRIES) return null;
  const out: Mapped = [];
  for (const entry of parsed) {
    if (typeof entry !== "string" || entry.length === 0) return null;
    out.push({ key: `record.${type}.${out.length}`, value: entry });
  }
  return out;
}

function mapTtl(type: string, value: string): Mapped | null {
  if (!/^\d{1,10}$/.test(value) || Number(value) > 2_147_483_647) return null;
  return [{ key: `record.${type}.ttl`, value }];
}

function mapUnsKey(key: string, value: string): Mapped | null {
  const fixed = FIXED[key];
  if (fixed !== undefined) return [{ key: fixed, value }];
  const parts = key.split(".");
  const [head] = parts;
  if (head === "crypto" && parts[parts.length - 1] === "address" && SEGMENT.test(parts[1] ?? "")) {
    const symbol = parts[1].toUpperCase();
    if (parts.length === 3) return [{ key: `token.${symbol}.0`, value }];
    if (parts.length === 5 && parts[2] === "version" && SEGMENT.test(parts[3])) {
      return [{ key: `token.${symbol}.${parts[3].toUpperCase()}.0`, value }];
    }
    return null;
  }
  if (head === "dns" && SEGMENT.test(parts[1] ?? "") && parts[1] !== "ttl") {
    const type = parts[1].toUpperCase();
    if (parts.length === 2) return mapDnsArray(type, value);
    if (parts.length === 3 && parts[2] === "ttl") return mapTtl(type, value);
    return null;
  }
  if (head === "social" && parts.length === 3 && parts[2] === "username" && SEGMENT.test(parts[1])) {
    return [{ key: `social.${parts[1].toUpperCase()}.0`, value }];
  }
  return null;
}

/**
 * Maps one UNS record. An empty value (a deletion) maps to nothing: the store drops every row the
 * native key produced. Never throws.
 *
 * @example mapUnsRecord("dns.A", '["10.0.0.1","10.0.0.2"]') // [{ key: "record.A.0", … }, { key: "record.A.1", … }]
 */
export function mapUnsRecord(nativeKey: string, nativeValue: string): Mapped {
  if (nativeValue === "") return [];
  const mapped = mapUnsKey(nativeKey, nativeValue);
  if (mapped === null || mapped.some((m) => m.value.includes("\u0000"))) {
    return [{ key: nativeKey, value: nativeValue }];
  }
  return mapped;
}
