import { CONNECTION_ERRNOS } from "../../domain/connection-failure.js";

// PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01..57P03 (admin/crash shutdown,
// cannot connect now), 53300 (too many connections), 40001/40P01 are not here on purpose: they are
// retryable conflicts of writers, not an unreachable store.
const PG_STATES = /^(08...|57P0[123]|53300)$/;

// The pg driver's (and pg-pool's) messages for a connection that is gone or never came.
const MESSAGES =
  /(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|the database system is (starting up|shutting down))/i;

function matches(e: unknown, depth: number): boolean {
  if (depth > 5 || e === null || typeof e !== "object") return false;
  const err = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof err.code === "string" && (CONNECTION_ERRNOS.has(err.code) || PG_STATES.test(err.code)))
    return true;
  if (typeof err.message === "string" && MESSAGES.test(err.message)) return true;
  // Node's happy-eyeballs connect reports an AggregateError of every address it tried.
  if (Array.isArray(err.errors) && err.errors.some((x) => matches(x, depth + 1))) return true;
  return matches(err.cause, depth + 1);
}

/** True when an error of the pg driver means PostgreSQL cannot be reached now (503), not a bug (500). */
export function isPgUnavailable(e: unknown): boolean {
  return matches(e, 0);
}
