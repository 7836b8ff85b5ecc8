// better-sqlite3 codes when the file is locked too long or the disk fails.
const SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|NOTADB|CORRUPT)/;

// better-sqlite3's message for a statement on a closed connection.
const MESSAGES = /connection is not open/i;

/** True when an error of better-sqlite3 means the database file cannot be used now (503), not a bug (500). */
export function isSqliteUnavailable(e: unknown): boolean {
  for (
    let err = e as { code?: unknown; message?: unknown; cause?: unknown } | null, depth = 0;
    depth <= 5;
    depth++
  ) {
    if (err === null || typeof err !== "object") return false;
    if (typeof err.code === "string" && SQLITE_CODES.test(err.code)) return true;
    if (typeof err.message === "string" && MESSAGES.test(err.message)) return true;
    err = err.cause as typeof err;
  }
  return false;
}
