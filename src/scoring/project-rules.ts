import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { normalizeName } from "../domain/names.js";
import { findNetwork, NETWORK_ORDER, type Network } from "../domain/networks.js";
import { findProvider, PROVIDER_ORDER, PROVIDERS, type Provider } from "../domain/providers.js";

const ProviderSchema = Type.Union(
  PROVIDER_ORDER.map((p) => Type.Literal(p)),
  { description: "A provider wire value (aliases such as ENS or UNS are accepted on write)" },
);
const NetworkSchema = Type.Union(
  NETWORK_ORDER.map((n) => Type.Literal(n)),
  { description: "A network wire value (aliases accepted on write)" },
);

function toggle<T extends typeof ProviderSchema | typeof NetworkSchema>(item: T, what: string) {
  return Type.Object(
    {
      enabled: Type.Optional(
        Type.Array(item, { uniqueItems: true, description: `When present, only these ${what} are served` }),
      ),
      disabled: Type.Optional(
        Type.Array(item, { uniqueItems: true, description: `These ${what} are never served` }),
      ),
    },
    { additionalProperties: false },
  );
}

export const ProjectExceptionSchema = Type.Object(
  {
    domain: Type.Optional(
      Type.String({ minLength: 3, maxLength: 1024, description: "A full name, e.g. alice.wallet" }),
    ),
    tld: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: "A top-level label, e.g. wallet" }),
    ),
    provider: ProviderSchema,
    network: Type.Optional(NetworkSchema),
  },
  { additionalProperties: false, description: "A domain or a TLD and the namespace that always wins for it" },
);

/**
 * A project's resolution settings and collision rules, as stored in `projects.settings` and edited
 * by the console and `omniname project rules`. docs/scoring.md documents every field.
 */
const ProjectRulesSchema = Type.Object(
  {
    networks: Type.Optional(toggle(NetworkSchema, "networks")),
    providers: Type.Optional(toggle(ProviderSchema, "providers")),
    providerPriority: Type.Optional(
      Type.Array(ProviderSchema, {
        uniqueItems: true,
        description: "Preferred providers, most preferred first",
      }),
    ),
    exceptions: Type.Optional(Type.Array(ProjectExceptionSchema, { maxItems: 10_000 })),
    includeExpired: Type.Optional(
      Type.Boolean({ description: "Serve expired names too (tagged `expired`, penalized); default false" }),
    ),
    liveLookups: Type.Optional(
      Type.Boolean({
        description:
          "ENS names under offchain or wildcard resolvers are looked up live (docs/ens-offchain.md); false: answered from the map alone, tagged `offchain-not-resolved`; default true",
      }),
    ),
  },
  { additionalProperties: false },
);

type ProjectRules = Static<typeof ProjectRulesSchema>;
export type ProjectException = Static<typeof ProjectExceptionSchema>;

type ParseResult = { ok: true; value: ProjectRules } | { ok: false; error: string };

const KEYS = [
  "networks",
  "providers",
  "providerPriority",
  "exceptions",
  "includeExpired",
  "liveLookups",
] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

class RuleError extends Error {}

function list<T extends string>(v: unknown, path: string, find: (s: string) => T | null, what: string): T[] {
  if (!Array.isArray(v)) throw new RuleError(`${path} must be an array of ${what} values`);
  const out: T[] = [];
  v.forEach((item, i) => {
    const found = typeof item === "string" ? find(item) : null;
    if (found === null) throw new RuleError(`${path}[${i}]: unknown ${what} ${JSON.stringify(item)}`);
    if (out.includes(found)) throw new RuleError(`${path}[${i}]: ${found} is listed twice`);
    out.push(found);
  });
  return out;
}

function toggleOf<T extends string>(v: unknown, path: string, find: (s: string) => T | null, what: string) {
  if (!isRecord(v)) throw new RuleError(`${path} must be an object { enabled?: [...], disabled?: [...] }`);
  const out: { enabled?: T[]; disabled?: T[] } = {};
  for (const k of Object.keys(v)) {
    if (k !== "enabled" && k !== "disabled")
      throw new RuleError(`${path}.${k}: unknown field (enabled, disabled)`);
  }
  if (v.enabled !== undefined) out.enabled = list(v.enabled, `${path}.enabled`, find, what);
  if (v.disabled !== undefined) out.disabled = list(v.disabled, `${path}.disabled`, find, what);
  const both = out.enabled?.find((x) => out.disabled?.includes(x));
  if (both) throw new RuleError(`${path}: ${both} is both enabled and disabled`);
  return out;
}

function exceptionOf(v: unknown, path: string, seen: Set<string>): ProjectException {
  if (!isRecord(v)) throw new RuleError(`${path} must be an object { domain | tld, provider, network? }`);
  for (const k of Object.keys(v)) {
    if (!["domain", "tld", "provider", "network"].includes(k)) {
      throw new RuleError(`${path}.${k}: unknown field (domain, tld, provider, network)`);
    }
  }
  if ((v.domain === undefined) === (v.tld === undefined))
    throw new RuleError(`${path}: give exactly one of domain, tld`);
  const provider = typeof v.provider === "string" ? findProvider(v.provider) : null;
  if (provider === null)
    throw new RuleError(`${path}.provider: unknown provider ${JSON.stringify(v.provider)}`);
  const out: ProjectException = { provider };
  if (v.network !== undefined) {
    const network = typeof v.network === "string" ? findNetwork(v.network) : null;
    if (network === null)
      throw new RuleError(`${path}.network: unknown network ${JSON.stringify(v.network)}`);
    if (!(PROVIDERS[provider].networks as readonly Network[]).includes(network)) {
      throw new RuleError(`${path}: ${provider} has no names on ${network}`);
    }
    out.network = network;
  }
  if (v.domain !== undefined) {
    const n = typeof v.domain === "string" ? normalizeName(v.domain) : null;
    if (n === null || !n.ok)
      throw new RuleError(`${path}.domain: not a valid name${n && !n.ok ? ` (${n.reason})` : ""}`);
    out.domain = n.value.name;
  } else {
    const raw = typeof v.tld === "string" ? v.tld.trim().replace(/^\./, "") : "";
    const n = raw.includes(".") || raw === "" ? null : normalizeName(`x.${raw}`);
    if (n === null || !n.ok) throw new RuleError(`${path}.tld: not a valid top-level label`);
    out.tld = n.value.tld;
  }
  const key = out.domain ? `domain ${out.domain}` : `tld ${out.tld}`;
  if (seen.has(key)) throw new RuleError(`${path}: a second exception for ${key}`);
  seen.add(key);
  return out;
}

/**
 * Validates and normalizes project rules for a write (console API, CLI): aliases become wire
 * values, names are normalized. The error names the offending field.
 *
 * @example parseProjectRules({ providerPriority: ["ens", "UNS"] }) // { ok: true, value: { providerPriority: ["NAMESPACE_C", "NAMESPACE_B"] } }
 */
export function parseProjectRules(input: unknown): ParseResult {
  try {
    if (!isRecord(input)) throw new RuleError("project rules must be a JSON object");
    for (const k of Object.keys(input)) {
      if (!(KEYS as readonly string[]).includes(k))
        throw new RuleError(`${k}: unknown setting (${KEYS.join(", ")})`);
    }
    const out: ProjectRules = {};
    if (input.networks !== undefined)
      out.networks = toggleOf(input.networks, "networks", findNetwork, "network");
    if (input.providers !== undefined)
      out.providers = toggleOf(input.providers, "providers", findProvider, "provider");
    if (input.providerPriority !== undefined) {
      out.providerPriority = list(input.providerPriority, "providerPriority", findProvider, "provider");
    }
    if (input.exceptions !== undefined) {
      if (!Array.isArray(input.exceptions)) throw new RuleError("exceptions must be an array");
      if (input.exceptions.length > 10_000) throw new RuleError("exceptions: at most 10000");
      const seen = new Set<string>();
      out.exceptions = input.exceptions.map((e, i) => exceptionOf(e, `exceptions[${i}]`, seen));
    }
    if (input.includeExpired !== undefined) {
      if (typeof input.includeExpired !== "boolean")
        throw new RuleError("includeExpired must be true or false");
      out.includeExpired = input.includeExpired;
    }
    if (input.liveLookups !== undefined) {
      if (typeof input.liveLookups !== "boolean") throw new RuleError("liveLookups must be true or false");
      out.liveLookups = input.liveLookups;
    }
    // The schema is what the console's OpenAPI shows: the normalized value must satisfy it.
    if (!Value.Check(ProjectRulesSchema, out)) {
      const e = [...Value.Errors(ProjectRulesSchema, out)][0];
      throw new RuleError(`${e?.path || "/"}: ${e?.message ?? "invalid"}`);
    }
    return { ok: true, value: out };
  } catch (e) {
    if (e instanceof RuleError) return { ok: false, error: e.message };
    throw e;
  }
}

/** Project rules in the form the ranker reads on every request: sets and maps, no parsing. */
export interface CompiledProjectRules {
  /** `null` when every network is allowed (the common case: no lookup at all). */
  allowedNetworks: ReadonlySet<string> | null;
  allowedProviders: ReadonlySet<string> | null;
  /** Provider → position in the priority list (0 = most preferred). */
  priority: ReadonlyMap<string, number>;
  domainExceptions: ReadonlyMap<string, ProjectException>;
  tldExceptions: ReadonlyMap<string, ProjectException>;
  includeExpired: boolean;
  /** ENS names under offchain or wildcard resolvers are looked up live (default true). */
  liveLookups: boolean;
  /** Parts of stored settings that did not validate and were ignored. */
  warnings: string[];
}

function allowed<T extends string>(all: readonly T[], t: { enabled?: T[]; disabled?: T[] } | undefined) {
  if (!t) return null;
  const set = new Set(all.filter((x) => (!t.enabled || t.enabled.includes(x)) && !t.disabled?.includes(x)));
  return set.size === all.length ? null : set;
}

/**
 * Compiles stored settings for the ranker. Stored settings were validated on write; if a part does
 * not validate any more (an older format), that part is ignored and reported in `warnings` rather
 * than failing every request of the project.
 */
export function compileProjectRules(settings: Record<string, unknown>): CompiledProjectRules {
  let rules: ProjectRules = {};
  const warnings: string[] = [];
  const whole = parseProjectRules(settings);
  if (whole.ok) rules = whole.value;
  else {
    for (const k of KEYS) {
      if (settings[k] === undefined) continue;
      const part = parseProjectRules({ [k]: settings[k] });
      if (part.ok) Object.assign(rules, part.value);
      else warnings.push(part.error);
    }
  }
  const domainExceptions = new Map<string, ProjectException>();
  const tldExceptions = new Map<string, ProjectException>();
  for (const e of rules.exceptions ?? []) {
    if (e.domain) domainExceptions.set(e.domain, e);
    else if (e.tld) tldExceptions.set(e.tld, e);
  }
  return {
    allowedNetworks: allowed(NETWORK_ORDER, rules.networks),
    allowedProviders: allowed(
      PROVIDER_ORDER,
      rules.providers as { enabled?: Provider[]; disabled?: Provider[] },
    ),
    priority: new Map((rules.providerPriority ?? []).map((p, i) => [p, i])),
    domainExceptions,
    tldExceptions,
    includeExpired: rules.includeExpired ?? false,
    liveLookups: rules.liveLookups ?? true,
    warnings,
  };
}

const compiled = new WeakMap<object, CompiledProjectRules>();
const NO_RULES = compileProjectRules({});

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * Compiled rules of a settings object, cached per object: a caller that keeps the project's
 * settings object between requests pays the compilation once.
 */
export function compiledRulesOf(settings: Record<string, unknown>): CompiledProjectRules {
  let c = compiled.get(settings);
  if (!c && isEmpty(settings)) return NO_RULES;
  if (!c) {
    c = compileProjectRules(settings);
    compiled.set(settings, c);
  }
  return c;
}
