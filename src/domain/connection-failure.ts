/**
 * Node's system errors of a connection that could not be made or did not last: what any client
 * (the store's drivers, fetch, a socket) reports when the service behind an address is away.
 */
export const CONNECTION_ERRNOS: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

/** The fields of Node's system error that say which connection failed. */
export interface ConnectionFailure {
  code: string;
  syscall?: string;
  address?: string;
  port?: number;
  hostname?: string;
}

/**
 * The connection failure behind an error, if any: the error itself, its `cause` chain, or one of
 * an AggregateError's errors (Node's connect tries each address of a host and aggregates them).
 *
 * @example
 * connectionFailureOf(new TypeError("fetch failed", { cause: refused })) // → refused (code ECONNREFUSED)
 */
export function connectionFailureOf(e: unknown, depth = 0): ConnectionFailure | null {
  if (e === null || typeof e !== "object" || depth > 6) return null;
  const err = e as Partial<ConnectionFailure> & { cause?: unknown; errors?: unknown };
  if (typeof err.code === "string" && CONNECTION_ERRNOS.has(err.code)) return err as ConnectionFailure;
  if (Array.isArray(err.errors))
    for (const inner of err.errors) {
      const found = connectionFailureOf(inner, depth + 1);
      if (found) return found;
    }
  return connectionFailureOf(err.cause, depth + 1);
}
