import punycode from "punycode/punycode.js";

/** RFC 1035 limits: a label carries at most 63 octets, a name at most 255 on the wire. */
export const MAX_DNS_LABEL = 63;
export const MAX_DNS_NAME = 255;

// What we emit: LDH labels plus the underscore (service labels such as `_dmarc`), lower case.
// Anything else a chain name may hold after IDNA (`$`, brackets of unknown ENS labels, …) is
// legal on the wire but not in a host name, and would need escaping in master files: skipped.
const SAFE_LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

const DNS_FORM = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

export type DnsNameResult = { ok: true; name: string } | { ok: false; reason: string };

/**
 * Whether a DNS name is also a host name (RFC 1123: letters, digits, hyphens; not an IPv4
 * literal): only a host name may own address and mail records or be an MX target (BIND's
 * check-names and check-mx).
 */
export function isHostName(dnsName: string): boolean {
  return !dnsName.includes("_") && !/^\d+\.\d+\.\d+\.\d+$/.test(dnsName);
}

/**
 * The DNS form of a stored (normalized, Unicode) name: IDNA A-labels (punycode), lower case, no
 * trailing dot. Refuses a label over 63 octets, a name over 255 octets on the wire, and a label
 * that is not a host-name label.
 *
 * @example buildDnsName("café.eth") // { ok: true, name: "xn--caf-dma.eth" }
 */
export function buildDnsName(name: string): DnsNameResult {
  // Already a DNS name (lower-case safe labels of at most 63 octets, no trailing dot; 253
  // characters are 255 octets on the wire): itself, without splitting (the zone export's names).
  if (name.length <= 253 && DNS_FORM.test(name)) return { ok: true, name };
  const trimmed = name.endsWith(".") ? name.slice(0, -1) : name;
  if (trimmed.length === 0) return { ok: false, reason: "empty name" };
  let wire = 1;
  const out: string[] = [];
  for (const label of trimmed.split(".")) {
    let ascii: string;
    try {
      ascii = /^[\x00-\x7f]*$/.test(label) ? label.toLowerCase() : `xn--${punycode.encode(label)}`;
    } catch {
      return { ok: false, reason: `label ${JSON.stringify(label)} has no IDNA form` };
    }
    if (ascii.length === 0) return { ok: false, reason: "empty label" };
    if (ascii.length > MAX_DNS_LABEL)
      return { ok: false, reason: `label of ${ascii.length} octets (over ${MAX_DNS_LABEL})` };
    if (!SAFE_LABEL.test(ascii))
      return { ok: false, reason: `label ${JSON.stringify(ascii)} is not a host-name label` };
    wire += ascii.length + 1;
    out.push(ascii);
  }
  if (wire > MAX_DNS_NAME) return { ok: false, reason: `name of ${wire} octets (over ${MAX_DNS_NAME})` };
  return { ok: true, name: out.join(".") };
}
