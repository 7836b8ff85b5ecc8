import pino, { type Logger } from "pino";
import { censorSecret, scrubLogLine, secretConfigPaths } from "./config/redact.js";

/**
 * Paths that never reach a log line: API keys, cookies, CSRF tokens, passwords and reset tokens,
 * wherever a request, a body or a config object puts them, and every secret setting of the
 * config schema (`secretConfigPaths`).
 */
const REDACT_PATHS: readonly string[] = [
  'req.headers["api-key"]',
  "req.headers.cookie",
  "req.headers.authorization",
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers["api-key"]',
  "headers.cookie",
  "headers.authorization",
  "*.password",
  "*.newPassword",
  "*.currentPassword",
  "*.token",
  "*.apiKey",
  "*.secret",
  ...secretConfigPaths(),
];

/**
 * The redaction of every logger of the process: the root logger's, and a child's that sets its
 * own (a child's `redact` replaces its parent's, so it must be this one).
 */
export const LOG_REDACTION = { paths: [...REDACT_PATHS], censor: censorSecret };

/**
 * The process's logger. `secretFragments` (`secretFragmentsOf(config)`) are scrubbed from every
 * line as written, and so are the credentials of any URL: a secret that a message or an error
 * text carries, where no redaction path can name it, still never reaches the log.
 */
export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  secretFragments: readonly string[] = [],
): Logger {
  return pino(
    {
      level,
      redact: LOG_REDACTION,
      base: { service: "omniname" },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: (line) => scrubLogLine(line, secretFragments) },
    },
    destination,
  );
}
