import { AppError } from "../domain/errors.js";
import type { Network } from "../domain/networks.js";
import { PROVIDER_ORDER, PROVIDERS, type Provider } from "../domain/providers.js";
import type { DomainWithRecords } from "../domain/types.js";
import type { RankedDomain, Ranker } from "../scoring/scoring-ranker.js";
import {
  type CompiledProjectRules,
  compileProjectRules,
  parseProjectRules,
} from "../scoring/project-rules.js";
import { isAllowedByProject } from "../scoring/rules/project-filter.rule.js";
import type { ProjectException } from "../scoring/project-rules.js";
import type { Store } from "../store/store.js";

/** At most this many changed names are listed; `changed` counts them all. */
export const DRY_RUN_LIST_CAP = 200;
const CHUNK = 500;

export interface Winner {
  namespace: Provider;
  network: Network;
  owner: string;
}

export interface DryRunResult {
  scanned: number;
  changed: number;
  names: Array<{ name: string; before: Winner | null; after: Winner | null }>;
  truncated: boolean;
}

const winnerOf = (r: RankedDomain | undefined): Winner | null =>
  r ? { namespace: r.domain.provider, network: r.domain.network, owner: r.domain.owner } : null;

function sameException(a: ProjectException | undefined, b: ProjectException | undefined): boolean {
  return a?.provider === b?.provider && a?.network === b?.network;
}

/** Keys of a map whose value differs between the two maps (added, removed or changed). */
function changedKeys(a: ReadonlyMap<string, ProjectException>, b: ReadonlyMap<string, ProjectException>) {
  const out = new Set<string>();
  for (const k of new Set([...a.keys(), ...b.keys()])) if (!sameException(a.get(k), b.get(k))) out.add(k);
  return out;
}

function samePriority(a: CompiledProjectRules, b: CompiledProjectRules): boolean {
  if (a.priority.size !== b.priority.size) return false;
  for (const [k, v] of a.priority) if (b.priority.get(k) !== v) return false;
  return true;
}

/**
 * The names whose winner can differ between two rule sets, without ranking the index, in batches
 * of at most CHUNK, each name once:
 *
 * - a (provider, network) pair enabled in one and not the other: every name on it (the only
 *   holder of a name appears or disappears; among several holders the set of candidates changes);
 * - includeExpired changed: every expired name;
 * - the provider priority changed: every name held more than once (a single holder wins whatever
 *   its bonus);
 * - an exception added, removed or changed: the names held more than once that it covers.
 *
 * Nothing else in the settings changes an order (docs/scoring.md), so other names keep their winner.
 * The names held more than once come from the store's collision index, in pages: never all at once.
 */
async function* affectedNames(
  store: Store,
  before: CompiledProjectRules,
  after: CompiledProjectRules,
  now: number,
): AsyncIterable<string[]> {
  const pairs: Array<{ provider: Provider; network: Network }> = [];
  for (const provider of PROVIDER_ORDER) {
    for (const network of PROVIDERS[provider].networks as readonly Network[]) {
      const d = { provider, network };
      if (isAllowedByProject(d, before) !== isAllowedByProject(d, after)) pairs.push(d);
    }
  }
  const expiredBy = before.includeExpired !== after.includeExpired ? now : null;
  const listed = await store.findNamesOnPairs(pairs, expiredBy);
  for (let i = 0; i < listed.length; i += CHUNK) yield listed.slice(i, i + CHUNK);
  const domains = changedKeys(before.domainExceptions, after.domainExceptions);
  const tlds = changedKeys(before.tldExceptions, after.tldExceptions);
  const priority = samePriority(before, after);
  if (priority && domains.size === 0 && tlds.size === 0) return;
  const seen = new Set(listed);
  const fresh = (names: Iterable<string>) => [...names].filter((n) => !seen.has(n));
  if (priority && tlds.size === 0) {
    // Only domain exceptions changed: their names, if held more than once.
    const holders = await store.findNameHolders([...domains]);
    const shared = fresh([...domains].filter((n) => (holders.get(n) ?? 0) > 1));
    for (let i = 0; i < shared.length; i += CHUNK) yield shared.slice(i, i + CHUNK);
    return;
  }
  const suffixes = [...tlds].map((t) => `.${t}`);
  for await (const page of store.iterateSharedNames(CHUNK)) {
    const names = fresh(
      page.filter((name) => !priority || domains.has(name) || suffixes.some((s) => name.endsWith(s))),
    );
    if (names.length > 0) yield names;
  }
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A name whose winner differs between two settings: the first candidate of each ranking. */
export interface WinnerChange {
  name: string;
  before: RankedDomain | undefined;
  after: RankedDomain | undefined;
}

/**
 * Every indexed name whose winner (the answer of `resolve` without filters) differs between the
 * settings `current` and `next` (both valid), in batches. The country is unknown (no geography
 * rule), the time is `now`.
 */
export async function* winnerChanges(
  deps: { store: Store; ranker: Ranker },
  current: Record<string, unknown>,
  next: Record<string, unknown>,
  now: number,
  counted: { scanned: number } = { scanned: 0 },
): AsyncIterable<WinnerChange[]> {
  const before = compileProjectRules(current);
  const after = compileProjectRules(next);
  const ctx = (projectSettings: Record<string, unknown>, rules: CompiledProjectRules) => ({
    projectSettings,
    rules,
    country: null,
    now,
    explain: false,
  });
  const ctxBefore = ctx(current, before);
  const ctxAfter = ctx(next, after);
  for await (const names of affectedNames(deps.store, before, after, now)) {
    counted.scanned += names.length;
    const byName = new Map<string, DomainWithRecords[]>();
    for (const d of await deps.store.findRankingCandidates(names)) {
      const list = byName.get(d.name);
      if (list) list.push(d);
      else byName.set(d.name, [d]);
    }
    const out: WinnerChange[] = [];
    for (const [name, candidates] of byName) {
      const a = deps.ranker.rank(candidates, ctxBefore)[0];
      const b = deps.ranker.rank(candidates, ctxAfter)[0];
      if (a?.domain.id !== b?.domain.id) out.push({ name, before: a, after: b });
    }
    if (out.length > 0) yield out;
  }
}

/**
 * Which indexed names change winner when a project's settings go from `current` to `proposed`.
 * `proposed` is validated as PUT settings validates it (same INVALID_PARAMETER messages); nothing
 * is saved.
 */
export async function dryRunSettings(
  deps: { store: Store; ranker: Ranker },
  current: Record<string, unknown>,
  proposed: unknown,
  now: number,
): Promise<DryRunResult> {
  const parsed = parseProjectRules(proposed);
  if (!parsed.ok) throw new AppError("INVALID_PARAMETER", parsed.error);
  const result: DryRunResult = { scanned: 0, changed: 0, names: [], truncated: false };
  // The first DRY_RUN_LIST_CAP changed names in name order, whatever order the batches come in.
  let listed: DryRunResult["names"] = [];
  const keepFirst = () => {
    listed.sort((a, b) => byCodeUnits(a.name, b.name));
    listed = listed.slice(0, DRY_RUN_LIST_CAP);
  };
  const next = parsed.value as Record<string, unknown>;
  for await (const batch of winnerChanges(deps, current, next, now, result)) {
    for (const { name, before, after } of batch) {
      result.changed++;
      listed.push({ name, before: winnerOf(before), after: winnerOf(after) });
      if (listed.length >= 2 * DRY_RUN_LIST_CAP) keepFirst();
    }
  }
  keepFirst();
  result.names = listed;
  result.truncated = result.changed > result.names.length;
  return result;
}
