import pino, { type Logger } from "pino";

/**
 * Paths that never reach a log line: API keys, cookies, CSRF tokens, passwords and reset tokens,
 * wherever a request, a body or a config object puts them.
 */
export const REDACT_PATHS = [
  'req.headers["api-key"]',
  "req.headers.cookie",
  "req.headers.authorization",
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  "*.password",
  "*.newPassword",
  "*.currentPassword",
  "*.token",
  "*.apiKey",
  "*.secret",
  "*.databaseUrl",
  "*.apiKeyPepper",
  "*.demoApiKey",
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      base: { service: "omniname" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
