import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import {
  addressRange,
  checkAddress,
  checkUrlShape,
  type WebhookAddressPolicy,
} from "../accounts/webhook-address.js";

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
const REFUSED = { outcome: "refused", statusCode: null, latencyMs: 0, responseStart: "" } as const;

export interface TransportOptions {
  policy: WebhookAddressPolicy;
  timeoutMs?: number;
  /** The resolver behind the socket's lookup (node:dns by default). */
  lookup?: (hostname: string, cb: (err: Error | null, addresses: LookupAddress[]) => void) => void;
}

/**
 * The socket's DNS lookup, through the SSRF guard: every address of the name is checked and the
 * connection goes to the first one, so the address checked is the one connected to (no window for
 * a DNS answer that changes between the check and the connection).
 */
function guardedLookup(opts: TransportOptions, loopbackOnly: boolean): LookupFunction {
  const resolve =
    opts.lookup ??
    ((h: string, cb: (e: Error | null, a: LookupAddress[]) => void) => dnsLookup(h, { all: true }, cb));
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err);
      if (addresses.length === 0) return callback(new Error(`${hostname} does not resolve`));
      for (const a of addresses) {
        const v =
          loopbackOnly && addressRange(a.address) !== "loopback"
            ? { ok: false as const, reason: "http:// only to a loopback address" }
            : checkAddress(a.address, opts.policy);
        if (!v.ok)
          return callback(
            Object.assign(new Error(`refused: ${hostname}: ${v.reason}`), { code: "EREFUSED_SSRF" }),
          );
      }
      const first = addresses[0]!;
      if (options?.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

/**
 * POSTs `body` to `url` with `headers`: no redirect followed (a 3xx is a failure), DELIVERY_TIMEOUT_MS
 * for the whole exchange, the response read up to RESPONSE_BODY_CAP bytes. The URL's shape and
 * every address are checked again here, at each delivery.
 */
export function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  opts: TransportOptions,
): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const shape = checkUrlShape(rawUrl, opts.policy);
  if (!shape.ok) return Promise.resolve({ ...REFUSED, error: shape.reason });
  const url = shape.url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const literal = checkAddress(host, opts.policy);
  if (!literal.ok && addressRange(host) !== null)
    return Promise.resolve({ ...REFUSED, error: literal.reason });
  const loopbackOnly = url.protocol === "http:";
  if (loopbackOnly && addressRange(host) !== null && addressRange(host) !== "loopback")
    return Promise.resolve({ ...REFUSED, error: "http:// only to a loopback address" });
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: Omit<DeliveryResult, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...r, latencyMs: elapsed() });
    };
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      lookup: guardedLookup(opts, loopbackOnly),
      agent: false,
    });
    const timer = setTimeout(
      () =>
        done({
          outcome: "failed",
          statusCode: null,
          responseStart: "",
          error: `timed out after ${opts.timeoutMs ?? DELIVERY_TIMEOUT_MS} ms`,
        }),
      opts.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    );
    req.on("error", (e: NodeJS.ErrnoException) =>
      done({
        outcome: e.code === "EREFUSED_SSRF" ? "refused" : "failed",
        statusCode: null,
        responseStart: "",
        error: e.message,
      }),
    );
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        const status = res.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString("utf8").slice(0, RESPONSE_START_CHARS);
        const ok = status >= 200 && status < 300;
        done({
          outcome: ok ? "delivered" : "failed",
          statusCode: status,
          responseStart: text,
          error: ok ? null : status >= 300 && status < 400 ? "redirect not followed" : `HTTP ${status}`,
        });
      };
      res.on("data", (c: Buffer) => {
        if (size >= RESPONSE_BODY_CAP) return;
        chunks.push(c.subarray(0, RESPONSE_BODY_CAP - size));
        size += c.length;
        if (size >= RESPONSE_BODY_CAP) finish();
      });
      res.on("end", finish);
      res.on("error", finish);
    });
    req.end(body);
  });
}
