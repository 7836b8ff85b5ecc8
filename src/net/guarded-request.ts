import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { type AddressPolicy, addressRange, checkAddress, checkUrlShape } from "./address-guard.js";

/** What one guarded request came to. */
export interface GuardedResponse {
  /** answered (any HTTP status), failed (no answer: timeout, connection), refused (the address check said no). */
  outcome: "answered" | "failed" | "refused";
  statusCode: number | null;
  headers: Record<string, string | string[] | undefined>;
  /** The body, at most `maxBytes` of it. */
  body: Buffer;
  /** Whether the body was longer than `maxBytes` (the rest was not read). */
  truncated: boolean;
  latencyMs: number;
  error: string | null;
}

export interface GuardedRequestOptions {
  policy: AddressPolicy;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Bytes of the response read at most; the rest is not read (the socket is destroyed). */
  maxBytes: number;
  /** Longest URL accepted (default net/address-guard.ts URL_MAX). */
  maxUrlLength?: number;
  /** The resolver behind the socket's lookup (node:dns by default). */
  lookup?: (hostname: string, cb: (err: Error | null, addresses: LookupAddress[]) => void) => void;
  signal?: AbortSignal;
}

/**
 * The socket's DNS lookup, through the SSRF guard: every address of the name is checked and the
 * connection goes to the first one, so the address checked is the one connected to (no window for
 * a DNS answer that changes between the check and the connection).
 */
function guardedLookup(opts: GuardedRequestOptions, loopbackOnly: boolean): LookupFunction {
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

const REFUSED = {
  outcome: "refused",
  statusCode: null,
  headers: {},
  body: Buffer.alloc(0),
  truncated: false,
  latencyMs: 0,
} as const;

/**
 * One HTTP(S) request to a URL someone outside gave us: the URL's shape and every address checked
 * (again at each request: no DNS rebinding window), no redirect followed (a 3xx is an answer the
 * caller refuses), `timeoutMs` for the whole exchange, the response read up to `maxBytes`. Never
 * throws: the outcome says what happened.
 *
 * @example
 * const r = await guardedRequest("https://gw.example/0xabc/0x1234.json", { policy, method: "GET", timeoutMs: 4000, maxBytes: 256 * 1024 });
 */
export function guardedRequest(rawUrl: string, opts: GuardedRequestOptions): Promise<GuardedResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const shape = checkUrlShape(rawUrl, opts.policy, opts.maxUrlLength);
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
    const done = (r: Omit<GuardedResponse, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      req.destroy();
      resolve({ ...r, latencyMs: elapsed() });
    };
    const failed = (error: string) =>
      done({
        outcome: "failed",
        statusCode: null,
        headers: {},
        body: Buffer.alloc(0),
        truncated: false,
        error,
      });
    const onAbort = () => failed("aborted");
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers: Record<string, string | number> = { ...opts.headers };
    if (opts.body !== undefined) headers["content-length"] = Buffer.byteLength(opts.body);
    const req = send(url, {
      method: opts.method,
      headers,
      lookup: guardedLookup(opts, loopbackOnly),
      agent: false,
    });
    const timer = setTimeout(() => failed(`timed out after ${opts.timeoutMs} ms`), opts.timeoutMs);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (e: NodeJS.ErrnoException) =>
      e.code === "EREFUSED_SSRF" ? done({ ...REFUSED, error: e.message }) : failed(e.message),
    );
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const finish = () =>
        done({
          outcome: "answered",
          statusCode: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          truncated,
          error: null,
        });
      res.on("data", (c: Buffer) => {
        if (size >= opts.maxBytes) return;
        chunks.push(c.subarray(0, opts.maxBytes - size));
        size += c.length;
        if (size > opts.maxBytes) {
          truncated = true;
          finish();
        }
      });
      res.on("end", finish);
      res.on("error", finish);
    });
    req.end(opts.body);
  });
}
