import { normalizeAddress } from "../domain/address.js";
import { type ChangeEvent, type ChangePayload, CHANGE_TYPES, isChangeType } from "../domain/change-events.js";
import { AppError } from "../domain/errors.js";
import { normalizeName } from "../domain/names.js";
import { findNetwork } from "../domain/networks.js";
import { findProvider } from "../domain/providers.js";
import type { CompiledProjectRules } from "../scoring/project-rules.js";
import { ranksAsDefault } from "../scoring/winner-events.js";

/**
 * A feed client's filter (docs/api.md, "Change feed"): each parameter a comma-separated list; an
 * event passes when it matches every list given (any value of a list). The project's settings
 * narrow networks and providers further: a disabled one is never streamed.
 */
export interface ChangeFilter {
  domains: ReadonlySet<string> | null;
  tlds: ReadonlySet<string> | null;
  addresses: ReadonlySet<string> | null;
  networks: ReadonlySet<string> | null;
  providers: ReadonlySet<string> | null;
  types: ReadonlySet<string> | null;
}

export const FILTER_PARAMETERS = ["domains", "tlds", "addresses", "networks", "providers", "types"] as const;
/** Values of all the filters together: a Set lookup each, so the bound is about the URL, not the cost. */
export const MAX_FILTER_VALUES = 1_000;
const MAX_VALUE_LENGTH = 256;
const TLD = /^[\p{L}\p{N}-]{1,63}$/u;

function bad(name: string, value: string, expected: string): AppError {
  const shown = JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  return new AppError("INVALID_PARAMETER", `The parameter "${name}" must list ${expected}; got ${shown}.`);
}

/** Lower-cases 0x addresses (the map stores them so); other record values are compared as they are. */
const addressKey = (v: string) => normalizeAddress(v) ?? v;

function nameOf(v: string): string | null {
  const r = normalizeName(v);
  return r.ok ? r.value.name : null;
}

const PARSERS: Record<(typeof FILTER_PARAMETERS)[number], [string, (v: string) => string | null]> = {
  domains: ["domain names such as alice.wallet", nameOf],
  tlds: ["top-level domains such as wallet", (v) => (TLD.test(v) ? v.toLowerCase() : null)],
  addresses: ["wallet addresses or record values", (v) => addressKey(v)],
  networks: ["networks such as POLYGON (aliases such as MATIC work)", (v) => findNetwork(v)],
  providers: ["providers such as NAMESPACE_A (aliases such as FNS work)", (v) => findProvider(v)],
  types: [`event types among ${CHANGE_TYPES.join(", ")}`, (v) => (isChangeType(v) ? v : null)],
};

/** Parses the query's filters; INVALID_PARAMETER names the parameter and value, PARAMETER_TOO_LONG the count. */
export function parseChangeFilter(query: Record<string, unknown>): ChangeFilter {
  const out: Record<string, Set<string> | null> = {};
  let count = 0;
  for (const name of FILTER_PARAMETERS) {
    const raw = query[name];
    if (raw === undefined) {
      out[name] = null;
      continue;
    }
    if (typeof raw !== "string")
      throw new AppError(
        "INVALID_PARAMETER",
        `The parameter "${name}" is repeated: give one comma-separated list.`,
      );
    const [expected, parse] = PARSERS[name];
    const set = new Set<string>();
    for (const part of raw.split(",")) {
      const v = part.trim();
      if (v === "") continue;
      if (++count > MAX_FILTER_VALUES)
        throw new AppError(
          "PARAMETER_TOO_LONG",
          `The filters list more than ${MAX_FILTER_VALUES} values together.`,
        );
      const parsed = v.length > MAX_VALUE_LENGTH ? null : parse(v);
      if (parsed === null) throw bad(name, v, expected);
      set.add(parsed);
    }
    out[name] = set.size === 0 ? null : set;
  }
  return out as unknown as ChangeFilter;
}

/** The owner and record values an event names (before and after), for the `addresses` filter. */
function addressesOf(p: ChangePayload): string[] {
  const out: string[] = [];
  if (p.state) {
    out.push(p.state.owner);
    for (const r of p.state.records) out.push(r.value);
  }
  if (p.owner) for (const o of [p.owner.from, p.owner.to]) if (o) out.push(o);
  if (p.records) {
    for (const r of p.records.added) out.push(r.value);
    for (const r of p.records.removed) out.push(r.value);
    for (const r of p.records.changed) out.push(r.from, r.to);
  }
  return out;
}

/**
 * Whether `e` goes to a client with filter `f` of project `projectId` with `rules`. A retraction is judged by
 * the event it retracts (its payload carries it), so it reaches the clients that got that event.
 */
export function matchesChange(
  e: ChangeEvent,
  f: ChangeFilter,
  rules: CompiledProjectRules,
  projectId: number,
): boolean {
  const kind = e.payload.retracted?.type ?? e.type;
  if (kind === "winner.changed") {
    // Ranked under the project's settings already: its own events, or the shared ones of every
    // project that ranks as the defaults do (winner-deriver.ts).
    if (e.projectId === null ? !ranksAsDefault(rules) : e.projectId !== projectId) return false;
  } else {
    if (e.projectId !== null && e.projectId !== projectId) return false;
    if (rules.allowedNetworks && !rules.allowedNetworks.has(e.network)) return false;
    if (rules.allowedProviders && !rules.allowedProviders.has(e.provider)) return false;
  }
  if (f.networks && !f.networks.has(e.network)) return false;
  if (f.providers && !f.providers.has(e.provider)) return false;
  if (f.types && !f.types.has(e.type)) return false;
  if (f.domains && !f.domains.has(e.name)) return false;
  if (f.tlds && !f.tlds.has(e.tld)) return false;
  if (f.addresses) {
    const payload = e.payload.retracted?.payload ?? e.payload;
    const { addresses } = f;
    if (!addressesOf(payload).some((a) => addresses.has(addressKey(a)))) return false;
  }
  return true;
}
