import { AppError } from "../domain/errors.js";
import { findNetwork, NETWORK_ORDER, type Network } from "../domain/networks.js";
import { findProvider, PROVIDER_ORDER, type Provider } from "../domain/providers.js";
import { compileProjectRules } from "../scoring/project-rules.js";
import type { KeyScopes } from "../store/accounts.port.js";
import { KEY_ENDPOINTS, MAX_EXPIRY_AHEAD_MS, MAX_ROTATION_OVERLAP_MS } from "./key-scope-names.js";

/** What a console body or the CLI may give for a key's limits (validated by parseKeyLimits). */
export interface KeyLimitsInput {
  endpoints?: unknown;
  networks?: unknown;
  providers?: unknown;
  expiresAt?: unknown;
}

/** The longest list a scope accepts: every value once, plus room for nothing (a list is a set). */
const MAX_LIST = 32;

function fieldError(field: string, message: string): AppError {
  return new AppError("INVALID_PARAMETER", `The field "${field}" ${message}`, { details: { field } });
}

/** An unknown name, quoted when it is a plain word; anything else is not echoed back. */
function shown(item: unknown): string {
  return typeof item === "string" && /^[\w.-]{1,64}$/.test(item) ? `"${item}"` : "a value";
}

function parseList<T extends string>(
  field: string,
  v: unknown,
  find: (s: string) => T | null,
  known: readonly T[],
): T[] | undefined {
  // null or absent: no limit of this kind.
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw fieldError(field, `must be a list of names (${known.join(", ")}) or null.`);
  if (v.length > MAX_LIST) throw fieldError(field, `has ${v.length} items; at most ${MAX_LIST}.`);
  if (v.length === 0)
    throw fieldError(field, "is empty: a key that may use none could not be used. Leave it out for all.");
  const out: T[] = [];
  for (const item of v) {
    const found = typeof item === "string" && item.length <= 64 ? find(item) : null;
    if (found === null)
      throw fieldError(field, `names ${shown(item)}, which is not one of ${known.join(", ")}.`);
    if (!out.includes(found)) out.push(found);
  }
  // Stored in the canonical order, whatever order the caller wrote.
  return known.filter((k) => out.includes(k));
}

const findEndpoint = (s: string) =>
  (KEY_ENDPOINTS as readonly string[]).includes(s.trim().toLowerCase())
    ? (s.trim().toLowerCase() as (typeof KEY_ENDPOINTS)[number])
    : null;

/** Parses a key's scopes; absent or null lists mean "all". Throws a field error (400) otherwise. */
export function parseKeyScopes(input: KeyLimitsInput): KeyScopes {
  const scopes: KeyScopes = {};
  const endpoints = parseList("endpoints", input.endpoints, findEndpoint, KEY_ENDPOINTS);
  const networks = parseList("networks", input.networks, findNetwork, NETWORK_ORDER);
  const providers = parseList("providers", input.providers, findProvider, PROVIDER_ORDER);
  if (endpoints) scopes.endpoints = endpoints;
  if (networks) scopes.networks = networks;
  if (providers) scopes.providers = providers;
  return scopes;
}

/** A time field: an ISO 8601 string with a time zone, or null/absent. */
function parseTime(field: string, v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (
    typeof v !== "string" ||
    v.length > 40 ||
    !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(v)
  )
    throw fieldError(field, "must be an ISO 8601 time with a time zone, e.g. 2030-01-31T12:00:00Z.");
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) throw fieldError(field, "is not a valid time.");
  return ms;
}

/** An expiry: null (never), or a time after `now` and at most ten years ahead. */
export function parseExpiry(v: unknown, now: number, field = "expiresAt"): number | null {
  const ms = parseTime(field, v);
  if (ms === null) return null;
  if (ms <= now) throw fieldError(field, "is in the past: an expiry must be a time to come.");
  if (ms > now + MAX_EXPIRY_AHEAD_MS) throw fieldError(field, "is more than ten years ahead.");
  return ms;
}

/** The end of a rotation's overlap: now or later, at most 30 days ahead (required). */
export function parseOverlapEnd(v: unknown, now: number): number {
  const field = "overlapUntil";
  const ms = parseTime(field, v);
  if (ms === null) throw fieldError(field, "is required: until when the old key keeps working.");
  // A second of slack: "now" computed by a browser a moment ago is not "in the past".
  if (ms < now - 1_000) throw fieldError(field, "is in the past.");
  if (ms > now + MAX_ROTATION_OVERLAP_MS) throw fieldError(field, "is more than 30 days ahead.");
  return Math.max(ms, now);
}

/**
 * The settings a key's requests resolve under: the project's, with the networks and providers
 * outside the key's scope disabled as a project would disable them. A domain on such a network is
 * then not visible to the key (resolve answers as if it did not exist), exactly as for a network
 * the project turned off. Returns `settings` itself when the key has no network or provider limit.
 *
 * @example
 * scopedSettings({}, { networks: ["POLYGON"] }) // { networks: { enabled: ["POLYGON"] } }
 */
export function scopedSettings(
  settings: Record<string, unknown>,
  scopes: KeyScopes,
): Record<string, unknown> {
  if (!scopes.networks && !scopes.providers) return settings;
  const rules = compileProjectRules(settings);
  const out: Record<string, unknown> = { ...settings };
  if (scopes.networks) {
    const allowed = rules.allowedNetworks;
    out.networks = {
      enabled: NETWORK_ORDER.filter(
        (n: Network) => (allowed === null || allowed.has(n)) && scopes.networks?.includes(n),
      ),
    };
  }
  if (scopes.providers) {
    const allowed = rules.allowedProviders;
    out.providers = {
      enabled: PROVIDER_ORDER.filter(
        (p: Provider) => (allowed === null || allowed.has(p)) && scopes.providers?.includes(p),
      ),
    };
  }
  return out;
}

/** 403 when a request names, explicitly, a network or provider outside the key's scope. */
export function checkNamedScope(
  scopes: KeyScopes,
  named: { networks?: readonly string[]; providers?: readonly string[] },
): AppError | null {
  for (const raw of named.networks ?? []) {
    const n = findNetwork(raw);
    if (n !== null && scopes.networks && !scopes.networks.includes(n))
      return new AppError(
        "NETWORK_NOT_ALLOWED",
        `This API key may not query the network ${n}; it may query ${scopes.networks.join(", ")}.`,
      );
  }
  for (const raw of named.providers ?? []) {
    const p = findProvider(raw);
    if (p !== null && scopes.providers && !scopes.providers.includes(p))
      return new AppError(
        "PROVIDER_NOT_ALLOWED",
        `This API key may not query the provider ${p}; it may query ${scopes.providers.join(", ")}.`,
      );
  }
  return null;
}
