import { readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import { AppError } from "../domain/errors.js";
import { type Config, ConfigSchema } from "./config.schema.js";

type Prop = {
  env?: string;
  type?: string;
  anyOf?: unknown[];
  default?: unknown;
  expected?: string;
  secret?: boolean;
};

/** Config keys with their environment variable, from the schema. */
function configEntries(): Array<{ key: string; env: string; schema: Prop & Record<string, unknown> }> {
  return Object.entries(ConfigSchema.properties as Record<string, Prop & Record<string, unknown>>)
    .filter(([, s]) => typeof s.env === "string")
    .map(([key, s]) => ({ key, env: s.env as string, schema: s }));
}

function coerce(raw: string, schema: Prop): unknown {
  if (schema.type === "integer" || schema.type === "number") {
    const n = Number(raw);
    return raw.trim() === "" || Number.isNaN(n) ? raw : n;
  }
  if (schema.type === "boolean") {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    return raw;
  }
  if (schema.type === "array")
    return raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  if (schema.type === "object") {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

/**
 * Parses configuration once: defaults < config file (OMNINAME_CONFIG, JSON) < environment.
 * An invalid value throws an error that names the variable, so start-up fails fast.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const fromFile: Record<string, unknown> = {};
  const file = env.OMNINAME_CONFIG;
  if (file) {
    try {
      Object.assign(fromFile, JSON.parse(readFileSync(file, "utf8")));
    } catch (e) {
      throw new AppError("CONFIG_INVALID", `OMNINAME_CONFIG: cannot read ${file}: ${(e as Error).message}`);
    }
  }
  const input: Record<string, unknown> = { ...fromFile };
  for (const { key, env: name, schema } of configEntries()) {
    const raw = env[name];
    if (raw !== undefined && raw !== "") input[key] = coerce(raw, schema);
  }
  Object.assign(input, overrides);
  const withDefaults = Value.Default(ConfigSchema, Value.Clone(input)) as Record<string, unknown>;
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  if (errors.length > 0) {
    const e = errors[0];
    const key = e.path.split("/")[1] ?? "";
    throw invalid(key, e.message, withDefaults[key]);
  }
  const config = withDefaults as Config;
  // One without the other would serve plain HTTP where TLS was meant (or fail at the first handshake).
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    const missing = config.tlsCertFile === undefined ? "tlsCertFile" : "tlsKeyFile";
    throw invalid(missing, "TLS_CERT_FILE and TLS_KEY_FILE are set together or not at all", undefined);
  }
  config.publicUrl =
    typeof withDefaults.publicUrl === "string"
      ? normalizePublicUrl(withDefaults.publicUrl)
      : publicUrlFor(config.host, config.port, schemeOf(config));
  return config;
}

/** The start-up error of one setting: the variable, what a valid value is, and what was given. */
function invalid(key: string, detail: string, value: unknown): AppError {
  const prop = (ConfigSchema.properties as Record<string, Prop>)[key];
  const name = prop?.env ?? key;
  const given =
    typeof value === "string" && !prop?.secret ? `; got ${JSON.stringify(value.slice(0, 200))}` : "";
  const what = prop?.expected ? `must be ${prop.expected}${given}` : detail;
  return new AppError("CONFIG_INVALID", `Invalid configuration ${name}: ${what}`, {
    details: { variable: name },
  });
}

/** PUBLIC_URL as an origin: `https://Console.Example.com:443/` → `https://console.example.com`. */
function normalizePublicUrl(raw: string): string {
  try {
    return new URL(raw).origin;
  } catch (e) {
    throw invalid("publicUrl", (e as Error).message, raw);
  }
}

/** The API's scheme: https when TLS_CERT_FILE is set (the server speaks TLS itself). */
export function schemeOf(config: Pick<Config, "tlsCertFile">): "http" | "https" {
  return config.tlsCertFile === undefined ? "http" : "https";
}

/**
 * The console's origin when PUBLIC_URL is not set: the address the API binds. A wildcard address
 * is not one a browser can open, so links use the loopback name: 0.0.0.0 → 127.0.0.1, :: →
 * localhost. Behind a proxy, or for people on other machines, set PUBLIC_URL.
 */
export function publicUrlFor(host: string, port: number, scheme: "http" | "https" = "http"): string {
  const h = host.trim().toLowerCase();
  const name =
    h === "0.0.0.0"
      ? "127.0.0.1"
      : h === "::" || h === "[::]" || /^[0:]+$/.test(h)
        ? "localhost"
        : h.includes(":") && !h.startsWith("[")
          ? `[${h}]`
          : h;
  try {
    return new URL(`${scheme}://${name}:${port}`).origin;
  } catch (e) {
    throw invalid("host", `not a host name or address (${(e as Error).message})`, host);
  }
}
