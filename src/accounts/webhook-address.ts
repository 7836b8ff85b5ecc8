import ipaddr from "ipaddr.js";
import type { Config } from "../config/config.schema.js";

// The SSRF guard of webhooks (docs/console-api.md, "Webhooks"): which URLs a project may register
// and which addresses a delivery may connect to. Pure: DNS comes in as a function, so the table
// test needs no network, and the deliverer passes the same check as the socket's own `lookup`
// (the address checked is the address connected to, at each delivery: no DNS rebinding window).

/** Resolves a host name to every address it has (node:dns `lookup` with `all: true`, or a table). */
export type ResolveAll = (hostname: string) => Promise<string[]>;

export interface WebhookAddressPolicy {
  /**
   * Loopback targets (127.0.0.0/8, ::1, names resolving to them) over http or https. Off in
   * production; the embedded mode turns it on so that a receiver on the same machine can be tried.
   */
  allowLoopback: boolean;
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };
export type AddressVerdict = { ok: true } | { ok: false; reason: string };

/** The longest URL a webhook may have. */
export const WEBHOOK_URL_MAX = 2048;

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
 * May a delivery connect to this address? Only public unicast addresses, and loopback when the
 * policy allows it. Every other range is refused, the ones that embed an IPv4 address (6to4,
 * Teredo, NAT64) included, since the IPv4 address inside could be a private one.
 */
export function checkAddress(address: string, policy: WebhookAddressPolicy): AddressVerdict {
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
export function checkUrlShape(raw: string, policy: WebhookAddressPolicy): UrlVerdict {
  if (raw.length > WEBHOOK_URL_MAX) return { ok: false, reason: `longer than ${WEBHOOK_URL_MAX} characters` };
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

/**
 * The whole check of a webhook URL: its shape, then every address its host resolves to (an IP
 * literal is its own address). One refused address refuses the URL: a name that resolves to a
 * public and a private address could be connected to either. http is accepted only when every
 * address is loopback (and the policy allows loopback).
 */
export async function checkWebhookUrl(
  raw: string,
  policy: WebhookAddressPolicy,
  resolveAll: ResolveAll,
): Promise<UrlVerdict> {
  const shape = checkUrlShape(raw, policy);
  if (!shape.ok) return shape;
  const host = shape.url.hostname;
  let addresses: string[];
  if (addressRange(host) !== null) addresses = [host.replace(/^\[|\]$/g, "")];
  else {
    try {
      addresses = await resolveAll(host);
    } catch {
      return { ok: false, reason: `${host} does not resolve` };
    }
    if (addresses.length === 0) return { ok: false, reason: `${host} does not resolve` };
  }
  for (const address of addresses) {
    const verdict = checkAddress(address, policy);
    if (!verdict.ok) return { ok: false, reason: `${host}: ${verdict.reason}` };
  }
  if (shape.url.protocol === "http:" && !addresses.every((a) => addressRange(a) === "loopback"))
    return { ok: false, reason: "must be https:// (http only to a loopback address)" };
  return shape;
}

/**
 * Loopback targets: WEBHOOK_ALLOW_LOOPBACK, or when unset the embedded defaults (no DATABASE_URL
 * and no RPC_URL_*: a developer's machine), as the demo account decides.
 */
export function webhookAddressPolicy(config: Config): WebhookAddressPolicy {
  const chains = Object.entries(config).some(([k, v]) => k.startsWith("rpcUrl") && v);
  return { allowLoopback: config.webhookAllowLoopback ?? (!config.databaseUrl && !chains) };
}
