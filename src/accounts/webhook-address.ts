import {
  type AddressPolicy,
  addressRange,
  checkAddress,
  checkUrlShape,
  type UrlVerdict,
} from "../net/address-guard.js";
import type { Config } from "../config/config.schema.js";

// The SSRF guard of webhooks (docs/console-api.md, "Webhooks"): which URLs a project may register
// and which addresses a delivery may connect to. Pure: DNS comes in as a function, so the table
// test needs no network, and the deliverer passes the same check as the socket's own `lookup`
// (the address checked is the address connected to, at each delivery: no DNS rebinding window).

/** Resolves a host name to every address it has (node:dns `lookup` with `all: true`, or a table). */
export type ResolveAll = (hostname: string) => Promise<string[]>;

/** Which addresses a webhook's deliveries may reach (net/address-guard.ts). */
export type WebhookAddressPolicy = AddressPolicy;

/** The longest URL a webhook may have. */
export const WEBHOOK_URL_MAX = 2048;

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
  const shape = checkUrlShape(raw, policy, WEBHOOK_URL_MAX);
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
