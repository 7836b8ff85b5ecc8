import ipaddr from "ipaddr.js";

// The SSRF guard of every request to a URL that someone outside gave us (webhook receivers, ENS
// gateways named by a resolver's OffchainLookup): which URLs may be asked and which addresses a
// socket may connect to. Pure: the table tests need no network (net/guarded-request.ts applies
// the same checks as the socket's own lookup, so the address checked is the one connected to).

export interface AddressPolicy {
  /**
   * Loopback targets (127.0.0.0/8, ::1, names resolving to them) over http or https. Off in
   * production; the embedded mode turns it on so that a server on the same machine can be tried.
   */
  allowLoopback: boolean;
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };
export type AddressVerdict = { ok: true } | { ok: false; reason: string };

/** The longest URL accepted by default. */
export const URL_MAX = 2048;

/**
 * The range an address is in: "unicast" for a public address, otherwise the name ipaddr.js gives
 * (private, loopback, linkLocal, uniqueLocal, carrierGradeNat, multicast, unspecified, reserved,
 * 6to4, teredo, …). An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
 * null: not an IP address.
 */
export function addressRange(address: string): string | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return null;
  let ip = ipaddr.parse(bare);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range();
}

/**
 * May an outgoing request connect to this address? Only public unicast addresses, and loopback when the
 * policy allows it. Every other range is refused, the ones that embed an IPv4 address (6to4,
 * Teredo, NAT64) included, since the IPv4 address inside could be a private one.
 */
export function checkAddress(address: string, policy: AddressPolicy): AddressVerdict {
  const range = addressRange(address);
  if (range === null) return { ok: false, reason: `${address} is not an IP address` };
  if (range === "unicast") return { ok: true };
  if (range === "loopback" && policy.allowLoopback) return { ok: true };
  return { ok: false, reason: `${address} is a ${range} address` };
}

/**
 * The URL's own shape: absolute, https (http only to loopback, when allowed: checked once the
 * addresses are known), no user name or password, no fragment, at most WEBHOOK_URL_MAX long.
 */
export function checkUrlShape(raw: string, policy: AddressPolicy, maxLength = URL_MAX): UrlVerdict {
  if (raw.length > maxLength) return { ok: false, reason: `longer than ${maxLength} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not an absolute URL" };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowLoopback))
    return { ok: false, reason: "must be https://" };
  if (url.username !== "" || url.password !== "")
    return { ok: false, reason: "must not carry a user name or password" };
  if (url.hash !== "") return { ok: false, reason: "must not have a #fragment" };
  if (url.hostname === "") return { ok: false, reason: "has no host" };
  return { ok: true, url };
}
