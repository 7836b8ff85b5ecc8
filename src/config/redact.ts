import { ConfigSchema } from "./config.schema.js";

/** Hides user:password and query-string keys in a URL (RPC providers put API keys in both). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    if (u.username) u.username = "***";
    for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, "***");
    // Keys embedded in the path (…/v2/<key>, …/v3/<key>) are as common as query keys.
    u.pathname = u.pathname.replace(/\/([A-Za-z0-9_-]{20,})(?=\/|$)/g, "/***");
    return u.toString();
  } catch {
    return "***";
  }
}

/** A copy of the config fit for logs: secrets and credentials in URLs hidden. */
export function redactConfig(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = ConfigSchema.properties as Record<string, { secret?: boolean }>;
  for (const [k, v] of Object.entries(config)) {
    if (props[k]?.secret && v !== undefined)
      out[k] = typeof v === "string" && /^[a-z]+:\/\//.test(v) ? redactUrl(v) : "***";
    else if (typeof v === "string" && /^[a-z]+:\/\//i.test(v)) out[k] = redactUrl(v);
    else out[k] = v;
  }
  return out;
}
