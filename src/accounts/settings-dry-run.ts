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
import type { SettingsWinnerCursor } from "../store/settings-winner-jobs.port.js";
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

/** What a change of rules can move (see affectedNames). */
interface Affected {
  pairs: Array<{ provider: Provider; network: Network }>;
  expiredBy: number | null;
  domains: Set<string>;
  suffixes: string[];
  priority: boolean;
}

function affectedBy(before: CompiledProjectRules, after: CompiledProjectRules, now: number): Affected {
  const pairs: Array<{ provider: Provider; network: Network }> = [];
  for (const provider of PROVIDER_ORDER) {
    for (const network of PROVIDERS[provider].networks as readonly Network[]) {
      const d = { provider, network };
      if (isAllowedByProject(d, before) !== isAllowedByProject(d, after)) pairs.push(d);
    }
  }
  return {
    pairs,
    expiredBy: before.includeExpired !== after.includeExpired ? now : null,
    domains: changedKeys(before.domainExceptions, after.domainExceptions),
    suffixes: [...changedKeys(before.tldExceptions, after.tldExceptions)].map((t) => `.${t}`),
    priority: samePriority(before, after),
  };
}

/** Whether a domain puts its name in phase 0 (what findNamesOnPairs selects). */
function inPhase0(d: DomainWithRecords, a: Affected): boolean {
  if (a.expiredBy !== null && d.expiresAt !== null && d.expiresAt <= a.expiredBy) return true;
  return a.pairs.some((p) => p.provider === d.provider && p.network === d.network);
}

/** A page of affected names and where the scan stands after it (the cursor to resume from). */
interface NamePage {
  names: string[];
  cursor: SettingsWinnerCursor;
}

/**
 * The names whose winner can differ between two rule sets, without ranking the index, in pages of
 * at most `pageSize`, in two phases, each a keyset scan in the store's name order that resumes
 * after `start` (the cursor of the last page done):
 *
 * - phase 0: every name on a (provider, network) pair enabled in one and not the other (the only
 *   holder of a name appears or disappears; among several holders the set of candidates changes),
 *   and, when includeExpired changed, every expired name;
 * - phase 1: when the provider priority changed, every name held more than once (a single holder
 *   wins whatever its bonus); when exceptions were added, removed or changed, the names held more
 *   than once that they cover. A name of phase 0 is dropped here (winnerChangePages does, from its
 *   candidates), so each name comes once.
 *
 * Nothing else in the settings changes an order (docs/scoring.md), so other names keep their winner.
 * Memory holds one page: the names held more than once come from the store's collision index.
 */
async function* affectedNames(
  store: Pick<Store, "scoring">,
  a: Affected,
  start: SettingsWinnerCursor,
  pageSize: number,
): AsyncIterable<NamePage> {
  if (start.phase === 0 && (a.pairs.length > 0 || a.expiredBy !== null)) {
    let after = start.name;
    for (;;) {
      const names = await store.scoring.findNamesOnPairs(a.pairs, a.expiredBy, { after, limit: pageSize });
      if (names.length === 0) break;
      after = names[names.length - 1]!;
      yield { names, cursor: { phase: 0, name: after } };
      if (names.length < pageSize) break;
    }
  }
  const from = start.phase === 1 ? start.name : null;
  if (a.priority && a.domains.size === 0 && a.suffixes.length === 0) return;
  if (a.priority && a.suffixes.length === 0) {
    // Only domain exceptions changed: their names, if held more than once (at most 10,000 of them).
    const sorted = [...a.domains].sort(byCodeUnits).filter((n) => from === null || n > from);
    const holders = await store.scoring.findNameHolders(sorted);
    const shared = sorted.filter((n) => (holders.get(n) ?? 0) > 1);
    for (let i = 0; i < shared.length; i += pageSize) {
      const names = shared.slice(i, i + pageSize);
      yield { names, cursor: { phase: 1, name: names[names.length - 1]! } };
    }
    return;
  }
  for await (const page of store.scoring.iterateSharedNames(pageSize, from)) {
    const names = page.filter(
      (name) => !a.priority || a.domains.has(name) || a.suffixes.some((s) => name.endsWith(s)),
    );
    // A page that keeps no name still moves the cursor.
    yield { names, cursor: { phase: 1, name: page[page.length - 1]! } };
  }
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A name whose winner differs between two settings: the first candidate of each ranking. */
export interface WinnerChange {
  name: string;
  before: RankedDomain | undefined;
  after: RankedDomain | undefined;
}

/** One page of winnerChangePages: the names that changed winner, and the cursor after the page. */
export interface WinnerChangePage {
  changes: WinnerChange[];
  /** Names looked at in this page. */
  scanned: number;
  cursor: SettingsWinnerCursor;
}

/** The cursor of a scan not started. */
export const START: SettingsWinnerCursor = { phase: 0, name: null };

/**
 * Every indexed name whose winner (the answer of `resolve` without filters) differs between the
 * settings `current` and `next` (both valid), one page of at most `pageSize` names at a time
 * (pages where nothing changed included), resuming after `start`. The country is unknown (no
 * geography rule), the time is `now`.
 */
export async function* winnerChangePages(
  deps: { store: Pick<Store, "scoring">; ranker: Ranker },
  current: Record<string, unknown>,
  next: Record<string, unknown>,
  now: number,
  opts: { start?: SettingsWinnerCursor; pageSize?: number } = {},
): AsyncIterable<WinnerChangePage> {
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
  const affected = affectedBy(before, after, now);
  const pages = affectedNames(deps.store, affected, opts.start ?? START, opts.pageSize ?? CHUNK);
  for await (const { names, cursor } of pages) {
    const byName = new Map<string, DomainWithRecords[]>();
    for (const d of names.length > 0 ? await deps.store.scoring.findRankingCandidates(names) : []) {
      const list = byName.get(d.name);
      if (list) list.push(d);
      else byName.set(d.name, [d]);
    }
    // Phase 1: a name phase 0 had is not ranked again.
    if (cursor.phase === 1)
      for (const [name, list] of byName) if (list.some((d) => inPhase0(d, affected))) byName.delete(name);
    const changes: WinnerChange[] = [];
    for (const [name, candidates] of byName) {
      const a = deps.ranker.rank(candidates, ctxBefore)[0];
      const b = deps.ranker.rank(candidates, ctxAfter)[0];
      if (a?.domain.id !== b?.domain.id) changes.push({ name, before: a, after: b });
    }
    yield { changes, scanned: byName.size, cursor };
  }
}

/**
 * Which indexed names change winner when a project's settings go from `current` to `proposed`.
 * `proposed` is validated as PUT settings validates it (same INVALID_PARAMETER messages); nothing
 * is saved.
 */
export async function dryRunSettings(
  deps: { store: Pick<Store, "scoring">; ranker: Ranker },
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
  for await (const page of winnerChangePages(deps, current, next, now)) {
    result.scanned += page.scanned;
    for (const { name, before, after } of page.changes) {
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
