import { WEBHOOK_URL_MAX, type WebhookAddressPolicy } from "../accounts/webhook-address.js";
import { type GuardedRequestOptions, guardedRequest } from "../net/guarded-request.js";

/** What one POST to a receiver came to. */
export interface DeliveryResult {
  /** delivered (2xx), failed (anything else: retried), refused (the address check said no: retried too). */
  outcome: "delivered" | "failed" | "refused";
  statusCode: number | null;
  latencyMs: number;
  /** The first characters of the response body (at most RESPONSE_START_CHARS). */
  responseStart: string;
  error: string | null;
}

export const DELIVERY_TIMEOUT_MS = 10_000;
/** Bytes of a response read at most; the rest is not read (the socket is destroyed). */
export const RESPONSE_BODY_CAP = 16 * 1024;
const RESPONSE_START_CHARS = 512;

export interface TransportOptions {
  policy: WebhookAddressPolicy;
  timeoutMs?: number;
  /** The resolver behind the socket's lookup (node:dns by default). */
  lookup?: GuardedRequestOptions["lookup"];
}

/**
 * POSTs `body` to `url` with `headers` through the SSRF guard (net/guarded-request.ts): no redirect
 * followed (a 3xx is a failure), DELIVERY_TIMEOUT_MS for the whole exchange, the response read up
 * to RESPONSE_BODY_CAP bytes. The URL's shape and every address are checked again at each delivery.
 */
export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  opts: TransportOptions,
): Promise<DeliveryResult> {
  const r = await guardedRequest(rawUrl, {
    policy: opts.policy,
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body,
    timeoutMs: opts.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    maxBytes: RESPONSE_BODY_CAP,
    maxUrlLength: WEBHOOK_URL_MAX,
    lookup: opts.lookup,
  });
  if (r.outcome !== "answered")
    return {
      outcome: r.outcome,
      statusCode: null,
      latencyMs: r.latencyMs,
      responseStart: "",
      error: r.error,
    };
  const status = r.statusCode ?? 0;
  const ok = status >= 200 && status < 300;
  return {
    outcome: ok ? "delivered" : "failed",
    statusCode: status,
    latencyMs: r.latencyMs,
    responseStart: r.body.toString("utf8").slice(0, RESPONSE_START_CHARS),
    error: ok ? null : status >= 300 && status < 400 ? "redirect not followed" : `HTTP ${status}`,
  };
}
