import { ConfigSchema } from "./config.schema.js";

const PROPS = ConfigSchema.properties as Record<string, { secret?: boolean }>;

/**
 * The config keys whose values are secrets: the schema's `secret: true` fields, and nothing else.
 * Every redaction list derives from this one (`redactConfig`, the logger's paths and the
 * fragments it scrubs from each line), so a secret setting added to the schema is redacted
 * everywhere at once.
 */
export const SECRET_CONFIG_KEYS: readonly string[] = Object.keys(PROPS).filter(
  (k) => PROPS[k]?.secret === true,
);

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Hides user:password and query-string keys in a URL (RPC providers put API keys in both). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    if (u.username) u.username = "***";
    for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, "***");
    // Keys embedded in the path (…/v2/<key>, …/v3/<key>) are as common as query keys.
    u.pathname = u.pathname.replace(/\/([A-Za-z0-9_-]{20,})(?=\/|$)/g, "/***");
    // Nothing hidden: log the value as written, not the URL parser's form of it (which adds a "/").
    return u.toString() === new URL(url).toString() ? url : u.toString();
  } catch {
    return "***";
  }
}

/** What a secret becomes in a log: a URL keeps its scheme, host and path shape, anything else is `***`. */
export function censorSecret(value: unknown): string {
  return typeof value === "string" && URL_LIKE.test(value) ? redactUrl(value) : "***";
}

/**
 * pino redaction paths of the secret config keys: at the top of a log object (`{ redisUrl }`),
 * one level down (`{ config }`) and two (`{ err: { config } }`).
 */
export function secretConfigPaths(): string[] {
  return SECRET_CONFIG_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);
}

/** A copy of the config fit for logs: secrets and credentials in URLs hidden. */
export function redactConfig(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) {
    if (PROPS[k]?.secret && v !== undefined) out[k] = censorSecret(v);
    else if (typeof v === "string" && URL_LIKE.test(v)) out[k] = redactUrl(v);
    else out[k] = v;
  }
  return out;
}

/**
 * The parts of the configured secrets that must never appear in a log line, whatever carries
 * them (a message, an error's text, a field no redaction path names): each secret value whole
 * and, for URLs, the password, a user name used as a token, query values and keys in the path.
 * Parts shorter than 4 characters are left out: scrubbing them would mangle every line.
 */
export function secretFragmentsOf(config: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const add = (s: string) => {
    if (s.length >= 4) out.add(s);
  };
  for (const key of SECRET_CONFIG_KEYS) {
    const v = config[key];
    if (typeof v !== "string" || v === "") continue;
    add(v);
    // DNS_TSIG_KEYS: `name:algorithm:secret`, comma-separated; each secret alone is scrubbed too.
    for (const entry of v.split(",")) {
      const parts = entry.trim().split(":");
      if (parts.length === 3 && /^[A-Za-z0-9+/]+={0,2}$/.test(parts[2])) add(parts[2]);
    }
    if (!URL_LIKE.test(v)) continue;
    try {
      const u = new URL(v);
      for (const raw of [u.password, u.password ? "" : u.username]) {
        if (!raw) continue;
        add(raw);
        add(decodeURIComponent(raw));
      }
      for (const value of u.searchParams.values()) add(value);
      for (const m of u.pathname.matchAll(/\/([A-Za-z0-9_-]{20,})(?=\/|$)/g)) add(m[1] as string);
    } catch {
      // Not parseable as a URL: the whole value is scrubbed already.
    }
  }
  return [...out].sort((a, b) => b.length - a.length);
}

// user:password@ or token@ right after a scheme, in any URL of any line.
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^/\s"@]+@/gi;

/**
 * Scrubs one serialized log line: credentials of any URL, then each secret fragment (as it
 * appears inside a JSON string). The last net under the redaction paths.
 */
export function scrubLogLine(line: string, fragments: readonly string[]): string {
  let out = line.replace(URL_CREDENTIALS, "$1***@");
  for (const f of fragments) {
    const inJson = JSON.stringify(f).slice(1, -1);
    if (out.includes(inJson)) out = out.replaceAll(inJson, "***");
  }
  return out;
}
