/**
 * The one registry of stable error codes. Every transport maps an AppError through this table:
 * the HTTP status for the REST and console APIs, the rcode for DNS. `docs/errors.md` lists every
 * code, and `errors.test.ts` keeps the two in sync.
 */
export const ERROR_CODES = {
  BAD_REQUEST: { status: 400, rcode: "FORMERR", message: "The request is malformed." },
  MISSING_PARAMETER: { status: 400, rcode: "FORMERR", message: "A required parameter is missing." },
  INVALID_PARAMETER: { status: 400, rcode: "FORMERR", message: "A parameter has an invalid value." },
  PARAMETER_TOO_LONG: { status: 400, rcode: "FORMERR", message: "A parameter is too long." },
  INVALID_DOMAIN: { status: 400, rcode: "FORMERR", message: "The domain name is not valid." },
  INVALID_NETWORK: { status: 400, rcode: "FORMERR", message: "Unknown network." },
  INVALID_PROVIDER: { status: 400, rcode: "FORMERR", message: "Unknown provider." },
  INVALID_ADDRESS: { status: 400, rcode: "FORMERR", message: "The wallet address is not valid." },
  AT_BEFORE_INDEX: {
    status: 400,
    rcode: "FORMERR",
    message: "The time asked for is before the first block the index holds.",
  },
  AT_AFTER_INDEX: {
    status: 400,
    rcode: "FORMERR",
    message: "The time asked for is in the future, or past the last block the index holds.",
  },
  API_KEY_MISSING: { status: 401, rcode: "REFUSED", message: "The api-key header is missing." },
  API_KEY_INVALID: { status: 401, rcode: "REFUSED", message: "The API key is not valid." },
  API_KEY_EXPIRED: { status: 401, rcode: "REFUSED", message: "The API key has expired." },
  ENDPOINT_NOT_ALLOWED: {
    status: 403,
    rcode: "REFUSED",
    message: "The API key may not call this endpoint.",
  },
  NETWORK_NOT_ALLOWED: { status: 403, rcode: "REFUSED", message: "The API key may not query this network." },
  PROVIDER_NOT_ALLOWED: {
    status: 403,
    rcode: "REFUSED",
    message: "The API key may not query this provider.",
  },
  IP_NOT_ALLOWED: { status: 403, rcode: "REFUSED", message: "The caller's IP address is not allowed." },
  ORIGIN_NOT_ALLOWED: { status: 403, rcode: "REFUSED", message: "The request origin is not allowed." },
  DOMAIN_NOT_FOUND: { status: 404, rcode: "NXDOMAIN", message: "No domain matches." },
  NOT_FOUND: { status: 404, rcode: "NXDOMAIN", message: "No such resource." },
  METHOD_NOT_ALLOWED: { status: 405, rcode: "NOTIMP", message: "Method not allowed." },
  REQUEST_TIMEOUT: { status: 408, rcode: "SERVFAIL", message: "The request took too long to arrive." },
  PAYLOAD_TOO_LARGE: { status: 413, rcode: "FORMERR", message: "The request is too large." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, rcode: "FORMERR", message: "Unsupported content type." },
  HEADERS_TOO_LARGE: { status: 431, rcode: "FORMERR", message: "The request headers are too large." },
  RATE_LIMITED: { status: 429, rcode: "REFUSED", message: "Too many requests." },
  QUOTA_EXCEEDED: { status: 429, rcode: "REFUSED", message: "The monthly quota is exhausted." },
  // The change feed (GET /changes): sent as an SSE `feed.error` event, or the status before the stream.
  CURSOR_EXPIRED: {
    status: 410,
    rcode: "REFUSED",
    message: "The cursor is older than the change log keeps.",
  },
  CURSOR_FROM_FUTURE: {
    status: 400,
    rcode: "FORMERR",
    message: "The cursor names an event that does not exist yet.",
  },
  FEED_BUSY: {
    status: 503,
    rcode: "SERVFAIL",
    message: "This server holds as many change feed streams as it may.",
  },
  // Console API (accounts, projects, team): docs/console-api.md.
  UNAUTHENTICATED: { status: 401, rcode: "REFUSED", message: "Sign in first." },
  INVALID_CREDENTIALS: { status: 401, rcode: "REFUSED", message: "Wrong e-mail address or password." },
  FORBIDDEN: { status: 403, rcode: "REFUSED", message: "Your role does not allow this." },
  CSRF_REJECTED: { status: 403, rcode: "REFUSED", message: "Missing or invalid CSRF token or origin." },
  EMAIL_NOT_VERIFIED: { status: 403, rcode: "REFUSED", message: "Verify your e-mail address first." },
  TWO_FACTOR_INVALID: {
    status: 401,
    rcode: "REFUSED",
    message: "The two-factor code is wrong, already used or expired.",
  },
  TWO_FACTOR_REQUIRED: {
    status: 403,
    rcode: "REFUSED",
    message: "This project requires two-factor sign-in: turn it on for your account first.",
  },
  PLAN_LIMIT_REACHED: { status: 403, rcode: "REFUSED", message: "The plan's limit is reached." },
  TOKEN_INVALID: { status: 400, rcode: "FORMERR", message: "The link is invalid, used or expired." },
  TERMS_NOT_ACCEPTED: { status: 400, rcode: "FORMERR", message: "The terms must be accepted." },
  WEAK_PASSWORD: { status: 400, rcode: "FORMERR", message: "The password does not meet the policy." },
  COMMON_PASSWORD: {
    status: 400,
    rcode: "FORMERR",
    message: "The password is on a list of common and breached passwords.",
  },
  CONFLICT: { status: 409, rcode: "REFUSED", message: "The resource already exists." },
  LAST_OWNER: { status: 409, rcode: "REFUSED", message: "A project keeps at least one owner." },
  TOO_MANY_ATTEMPTS: { status: 429, rcode: "REFUSED", message: "Too many failed attempts; try again later." },
  INTERNAL_ERROR: { status: 500, rcode: "SERVFAIL", message: "Internal error." },
  OFFCHAIN_LOOKUP_FAILED: {
    status: 502,
    rcode: "SERVFAIL",
    message: "The name's records are not on chain and its resolver or gateway did not answer them.",
  },
  STORE_UNAVAILABLE: { status: 503, rcode: "SERVFAIL", message: "The data store is unavailable." },
  UPSTREAM_UNAVAILABLE: {
    status: 503,
    rcode: "SERVFAIL",
    message: "A service this server depends on cannot be reached; retry shortly.",
  },
  SOURCE_HALTED: {
    status: 503,
    rcode: "SERVFAIL",
    message: "A crawler source is halted: its names are no longer updated.",
  },
  SHUTTING_DOWN: {
    status: 503,
    rcode: "SERVFAIL",
    message: "The server is shutting down; retry on another instance.",
  },
  // Failures outside HTTP (start-up, the crawler): the status and rcode apply only if one ever
  // reaches a transport, and then it is a server-side failure.
  CONFIG_INVALID: { status: 500, rcode: "SERVFAIL", message: "The configuration is invalid." },
  RPC_UNAVAILABLE: { status: 503, rcode: "SERVFAIL", message: "A chain's JSON-RPC endpoint failed." },
  REORG_BEYOND_FINALITY: {
    status: 500,
    rcode: "SERVFAIL",
    message: "A chain reorganisation went deeper than the finality window.",
  },
} as const satisfies Record<string, { status: number; rcode: string; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

interface AppErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  details?: Record<string, unknown>;
}

/** The one error type of the codebase: a stable code, a human message, retryability and a cause. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, options: AppErrorOptions = {}) {
    super(message ?? ERROR_CODES[code].message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}
