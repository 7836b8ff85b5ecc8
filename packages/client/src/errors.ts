import type { components, paths } from "./schema.js";

type ErrorBody = paths["/svc/api/v1/resolve"]["get"]["responses"]["4XX"]["content"]["application/json"];

/** Every stable error code the server can answer with (docs/errors.md of omniname). */
export type OmninameErrorCode = ErrorBody["error"]["code"];

/** Not a code of the server: the request never got an omniname answer (network, timeout, not JSON). */
export type ClientErrorCode = "NETWORK_ERROR" | "UNEXPECTED_RESPONSE";

/**
 * An error answer of omniname (`{ result: false, error: { code, message } }`), or a request that
 * got none. Branch on `code`; `message` is for people and may be reworded.
 *
 * @example
 * try { await client.resolve("nobody.wallet"); }
 * catch (e) { if (e instanceof OmninameError && e.code === "DOMAIN_NOT_FOUND") … }
 */
export class OmninameError extends Error {
  readonly code: OmninameErrorCode | ClientErrorCode;
  /** The HTTP status (0 when no response arrived). */
  readonly status: number;
  /** From `Retry-After` on 429 and 503, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: OmninameErrorCode | ClientErrorCode,
    message: string,
    status: number,
    opts: { retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = "OmninameError";
    this.code = code;
    this.status = status;
    this.retryAfterMs = opts.retryAfterMs;
  }

  /** Worth retrying as is: rate or quota limits, an unavailable store, a network failure. */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503 || this.code === "NETWORK_ERROR";
  }
}

/** `Retry-After` (seconds or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export type { components };
