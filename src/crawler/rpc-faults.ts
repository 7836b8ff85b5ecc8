import { AppError } from "../domain/errors.js";

// The JSON-RPC client's faults (what failed, and whether to retry or ask for less) and the
// per-endpoint Retry-After every client on a URL obeys. The client itself is rpc-client.ts.

/**
 * Why an RPC call failed. The block-range layer halves its range on `too-many-results`,
 * `response-too-large` (the node refused with HTTP 413, or the reply is above the client's own
 * limit), `part-too-large` (the reply is above the call's lower limit: a getLogs part of several
 * blocks, block-range.ts `PART_REPLY_BYTES`) and `timeout`; the client itself retries
 * `rate-limited`, `server`, `network` and `null-result` with backoff. `rpc` (a JSON-RPC error the
 * node means) is final.
 */
export const RPC_FAULTS = {
  "too-many-results": { retryable: true, shrinks: true },
  "response-too-large": { retryable: true, shrinks: true },
  "part-too-large": { retryable: true, shrinks: true },
  timeout: { retryable: true, shrinks: true },
  "rate-limited": { retryable: true, shrinks: false },
  server: { retryable: true, shrinks: false },
  network: { retryable: true, shrinks: false },
  "null-result": { retryable: true, shrinks: false },
  rpc: { retryable: false, shrinks: false },
} as const;

export type RpcFault = keyof typeof RPC_FAULTS;

export interface RpcFaultDetails {
  fault: RpcFault;
  method: string;
  /** Seconds the server asked us to wait (429 Retry-After). */
  retryAfter?: number;
  httpStatus?: number;
  rpcCode?: number;
}

export function rpcError(message: string, details: RpcFaultDetails, cause?: unknown): AppError {
  return new AppError("RPC_UNAVAILABLE", message, {
    retryable: RPC_FAULTS[details.fault].retryable,
    details: { ...details },
    cause,
  });
}

/** The fault of an error thrown by the client, or null for anything else. */
export function faultOf(e: unknown): RpcFaultDetails | null {
  if (!(e instanceof AppError) || !e.details || typeof e.details.fault !== "string") return null;
  return e.details as unknown as RpcFaultDetails;
}

// Providers word "too many results" in many ways: Alchemy ("query returned more than 10000
// results"), Infura (-32005 "query returned more than 10000 results"), QuickNode/Ankr ("block range
// is too wide", "exceed maximum block range"), geth ("query timeout exceeded"), BSC nodes ("limit
// exceeded"), Erigon ("too many logs").
export const TOO_MANY =
  /more than \d+ results|too many (results|logs|blocks)|block range (is )?too (wide|large)|range (is )?too (large|wide)|exceed(s|ed)? (the )?max(imum)? (block )?range|limit exceeded|response (size|is too)|query timeout|log response size|range limit/i;

/** Classifies a JSON-RPC error object. */
export function classifyRpcError(error: { code?: number; message?: string }): RpcFault {
  const message = String(error.message ?? "");
  if (TOO_MANY.test(message) || error.code === -32005) return "too-many-results";
  if (
    /rate limit|too many requests|capacity|exceeded .*(quota|compute units)/i.test(message) ||
    error.code === 429
  )
    return "rate-limited";
  // -32000 "header not found" / "unknown block": a load-balanced node behind its peers.
  if (
    /header not found|unknown block|not synced|temporarily unavailable|internal error|try again/i.test(
      message,
    )
  )
    return "server";
  if (error.code === -32603) return "server";
  return "rpc";
}

/** Parses Retry-After (delta seconds or an HTTP date) into seconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/**
 * The longest a server's Retry-After is honoured for (10 min): a longer or absurd value (a
 * misconfigured gateway's "Retry-After: 86400") is cut to this, so one answer cannot stall a
 * source for a day; the crawler then asks again and gets a fresh Retry-After if the limit stands.
 */
export const MAX_RETRY_AFTER_MS = 600_000;

/**
 * Per endpoint (URL), the moment before which no request may be sent: set by a 429/5xx with
 * Retry-After, awaited by every call of every client on that URL (the crawler's sources that share
 * a node), not only by the call that was told to wait.
 */
const notBefore = new Map<string, number>();

/** The time before which no request is sent to `url` (0 when none is in force). */
export function endpointNotBefore(url: string, now = Date.now()): number {
  const t = notBefore.get(url) ?? 0;
  if (t <= now) {
    notBefore.delete(url);
    return 0;
  }
  return t;
}

/** Holds back every request to `url` for `retryAfterSecs` (capped at MAX_RETRY_AFTER_MS). */
export function deferEndpoint(url: string, retryAfterSecs: number, now = Date.now()): number {
  const until = now + Math.min(MAX_RETRY_AFTER_MS, Math.max(0, retryAfterSecs * 1000));
  const t = Math.max(notBefore.get(url) ?? 0, until);
  if (t > now) notBefore.set(url, t);
  return t;
}
