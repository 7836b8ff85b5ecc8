/**
 * The console API client: same origin, the session cookie, the CSRF header on every write, the
 * `{ result, data | error }` envelope unwrapped, and every error turned into an `ApiError` whose
 * `message` a person understands (see `humanMessage`).
 */
import { plainMessage } from "./messages";

export const API_BASE = "/console/api";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly serverMessage: string,
    readonly retryAfterS: number | null = null,
  ) {
    super(humanMessage(status, code, serverMessage, retryAfterS));
  }
  /** The settings path the server's message names (`exceptions[2].domain: …`), if any. */
  get field(): string | null {
    const m = /^([a-zA-Z]+(?:\[\d+\])?(?:\.[a-zA-Z]+)?)(?::|\s+must)/.exec(this.serverMessage);
    return m ? m[1] : null;
  }
}

/**
 * The form field an error concerns: a settings path or a field prefix (`exceptions[2].domain: …`,
 * `code: …`) or a field the server names (`The field "expiresAt" …`); null for the others.
 */
export function fieldName(error: unknown): string | null {
  if (!(error instanceof ApiError)) return null;
  return error.field ?? /^The (?:field|parameter) "([a-zA-Z]+)"/.exec(error.serverMessage)?.[1] ?? null;
}

function waitText(s: number): string {
  if (s < 90) return `${s} second${s === 1 ? "" : "s"}`;
  const m = Math.ceil(s / 60);
  return `${m} minute${m === 1 ? "" : "s"}`;
}

/** What the person reads: a few codes get context; field messages are worded by messages.ts. */
export function humanMessage(status: number, code: string, message: string, retryAfterS: number | null) {
  switch (code) {
    case "TOO_MANY_ATTEMPTS":
    case "RATE_LIMITED":
      return retryAfterS !== null
        ? `Too many attempts. For your security, please wait ${waitText(retryAfterS)} and try again.`
        : "Too many attempts. Please wait a few minutes and try again.";
    case "CSRF_REJECTED":
      return "Your page was out of date and the request was refused for your security. Please try again.";
    case "UNAUTHENTICATED":
      return "Your session has ended. Please sign in again.";
    case "FORBIDDEN":
      return "Your role in this project does not allow this. Ask an owner or admin.";
    case "TOKEN_INVALID":
      return "This link is invalid, already used or expired. Ask for a new one.";
    case "INTERNAL_ERROR":
      return "Something went wrong on our side. Please try again in a moment.";
    case "NETWORK":
      return "The console cannot reach the server. Check your connection and try again.";
  }
  if (status >= 500) return "The service is temporarily unavailable. Please try again in a moment.";
  return plainMessage(message);
}

let csrfToken: string | null = null;
let preSession = false;

export function setCsrfToken(token: string | null, pre = false): void {
  csrfToken = token;
  preSession = pre;
}

/** Called when a signed-in request gets 401: the app sends the user to sign in and back. */
let onUnauthenticated: (() => void) | null = null;
export function setUnauthenticatedHandler(fn: (() => void) | null): void {
  onUnauthenticated = fn;
}

async function ensureCsrf(): Promise<void> {
  if (csrfToken !== null) return;
  const data = await raw<{ csrfToken: string }>("GET", "/csrf");
  csrfToken = data.csrfToken;
  preSession = true;
}

/**
 * Fetches the current CSRF token again: the session's (GET /account) when signed in, else a
 * pre-session one. A session that is gone is reported as UNAUTHENTICATED.
 */
async function refreshCsrf(): Promise<void> {
  const hadSession = csrfToken !== null && !preSession;
  csrfToken = null;
  if (hadSession) {
    csrfToken = (await raw<{ csrfToken: string }>("GET", "/account")).csrfToken;
    return;
  }
  await ensureCsrf();
}

async function raw<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken !== null) headers["x-csrf-token"] = csrfToken;
  let res: Response;
  try {
    res = await fetch(API_BASE + path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "NETWORK", "network error");
  }
  let json: { result?: boolean; data?: T; error?: { code: string; message: string } } = {};
  try {
    json = await res.json();
  } catch {
    // not JSON: handled below
  }
  if (res.ok && json.result !== false) return json.data as T;
  const retry = res.headers.get("retry-after");
  throw new ApiError(
    res.status,
    json.error?.code ?? (res.status >= 500 ? "INTERNAL_ERROR" : "BAD_REQUEST"),
    json.error?.message ?? res.statusText,
    retry !== null && /^\d+$/.test(retry) ? Number(retry) : null,
  );
}

export interface RequestOptions {
  /** A signed-out page (sign-in, register…): a 401 is an answer, not a lost session. */
  public?: boolean;
}

/** One console API call. Writes carry the CSRF token; a refused token is fetched again once. */
export async function api<T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}) {
  const lost = (e: unknown) => {
    if (e instanceof ApiError && e.code === "UNAUTHENTICATED" && !opts.public) {
      csrfToken = null;
      onUnauthenticated?.();
    }
    return e;
  };
  try {
    if (method !== "GET") await ensureCsrf();
    return await raw<T>(method, path, body);
  } catch (e) {
    // A stale token (its cookie expired, or the session changed in another tab): fetch the
    // current one and retry once; a second refusal is shown.
    if (e instanceof ApiError && e.code === "CSRF_REJECTED" && method !== "GET") {
      try {
        await refreshCsrf();
        return await raw<T>(method, path, body);
      } catch (again) {
        throw lost(again);
      }
    }
    throw lost(e);
  }
}

export const get = <T>(path: string, opts?: RequestOptions) => api<T>("GET", path, undefined, opts);
export const post = <T>(path: string, body: unknown = {}, opts?: RequestOptions) =>
  api<T>("POST", path, body, opts);
export const put = <T>(path: string, body: unknown) => api<T>("PUT", path, body);
export const patch = <T>(path: string, body: unknown) => api<T>("PATCH", path, body);
export const del = <T>(path: string) => api<T>("DELETE", path);
