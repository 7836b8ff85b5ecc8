import type { DomainWithRecords } from "../domain/types.js";
import type { ScoringFacts } from "../scoring/scoring-index.js";
import type { ScoringLists } from "../scoring/scoring-lists.js";
import type { TldOrigin } from "../scoring/scoring.types.js";
import type { TldFirstRegistration } from "../store/scoring-data.port.js";
import { buildScoringIndex, type RescoreStore, rescoreAll, rescorePage } from "./rescore.job.js";
import { listsFingerprint, loadScoringState, saveScoringState } from "./scoring-state.js";

/** Names whose domains are read and scored per page. */
const NAME_PAGE = 400;
/** Unscored names read per round trip; a pass stops after this many pages (the next goes on). */
const UNSCORED_PAGE = 2000;
const MAX_UNSCORED_PAGES = 500;

export interface RescoreChangedStats {
  /** `full`: the lists, the rules or a TLD's origin changed, so every domain was scored. */
  mode: "full" | "changed";
  /** Domains scored, and of them those whose signals changed. */
  scanned: number;
  updated: number;
  /** The facts the pass scored with (the crawler scores new domains with them). */
  index: ScoringFacts;
}

/**
 * The periodic rescoring pass of a running omniname: scores only what changed since the last
 * pass (recorded in the store, so a restart does not start over):
 * - names whose holder count crossed one ↔ several (the `collision` tag), from the name index's
 *   versions (migration 0014);
 * - names whose lookalike status changed (the `confusable:` tag): the lookalike groups are read
 *   from the skeleton index, which is small;
 * - everything, when the operator's lists or the rules changed (listsFingerprint), when no pass
 *   was ever recorded, or when a TLD's origin moved to another namespace while the TLD is held in
 *   several (rare: a namespace starting to sell an existing TLD).
 * `opts.onIndex` receives the new facts before any domain is scored, so the crawler's writes during
 * the pass already use them.
 */
export async function rescoreChanged(
  store: RescoreStore,
  lists: ScoringLists,
  opts: { onIndex?: (facts: ScoringFacts) => void; signal?: AbortSignal } = {},
): Promise<RescoreChangedStats> {
  const { signal } = opts;
  const state = await loadScoringState(store.scoring);
  const facts = await buildScoringIndex(store, lists);
  opts.onIndex?.(facts);
  let mode: RescoreChangedStats["mode"] = "changed";
  let scanned = 0;
  let updated = 0;
  if (
    state.facts === null ||
    state.fingerprint !== listsFingerprint(lists) ||
    originsMoved(state.facts.tldOrigins, facts.tldOrigins, await store.scoring.listTldFirstRegistrations())
  ) {
    mode = "full";
    const all = await rescoreAll(store, lists, { signal });
    scanned += all.scanned;
    updated += all.updated;
  } else {
    const names = imitationChanges(state.facts.imitated, facts.imitated);
    for (let i = 0; i < names.length && !signal?.aborted; i += NAME_PAGE) {
      const r = await rescoreNames(store, names.slice(i, i + NAME_PAGE), lists, facts);
      scanned += r.scanned;
      updated += r.updated;
    }
  }
  const drained = await rescoreUnscoredNames(store, lists, facts, signal);
  // An interrupted pass records nothing: the next one does its work again.
  if (!signal?.aborted) await saveScoringState(store.scoring, lists, facts);
  return { mode, scanned: scanned + drained.scanned, updated: updated + drained.updated, index: facts };
}

/** Scores the domains of names whose holder count crossed one ↔ several, and records their versions. */
async function rescoreUnscoredNames(
  store: RescoreStore,
  lists: ScoringLists,
  facts: ScoringFacts,
  signal: AbortSignal | undefined,
) {
  let scanned = 0;
  let updated = 0;
  for (let page = 0; page < MAX_UNSCORED_PAGES; page++) {
    const unscored = await store.scoring.findUnscoredNames(UNSCORED_PAGE);
    for (let i = 0; i < unscored.length && !signal?.aborted; i += NAME_PAGE) {
      const chunk = unscored.slice(i, i + NAME_PAGE);
      const r = await rescoreNames(
        store,
        chunk.map((u) => u.name),
        lists,
        facts,
      );
      scanned += r.scanned;
      updated += r.updated;
      await store.scoring.markNamesScored(chunk);
    }
    if (unscored.length < UNSCORED_PAGE || signal?.aborted) break;
  }
  return { scanned, updated };
}

async function rescoreNames(
  store: RescoreStore,
  names: readonly string[],
  lists: ScoringLists,
  facts: ScoringFacts,
): Promise<{ scanned: number; updated: number }> {
  if (names.length === 0) return { scanned: 0, updated: 0 };
  const domains: DomainWithRecords[] = await store.domainMap.findDomainsByName([...names], {});
  return { scanned: domains.length, updated: await rescorePage(store, domains, lists, facts) };
}

/** The names whose imitated original differs between two passes (added, removed or changed). */
export function imitationChanges(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  const out = new Set<string>();
  for (const [name, original] of after) if (before.get(name) !== original) out.add(name);
  for (const name of before.keys()) if (!after.has(name)) out.add(name);
  return [...out].sort();
}

/**
 * True when a TLD's origin moved to another namespace (or time) while another namespace holds
 * names under it: those names' origin bonus changes. A TLD new since the last pass scored right
 * when its domains were written (each took itself as the origin) unless several namespaces
 * already hold it.
 */
export function originsMoved(
  before: ReadonlyMap<string, TldOrigin>,
  after: ReadonlyMap<string, TldOrigin>,
  registrations: readonly TldFirstRegistration[],
): boolean {
  const providers = new Map<string, Set<string>>();
  for (const r of registrations) {
    const set = providers.get(r.tld) ?? new Set<string>();
    set.add(r.provider);
    providers.set(r.tld, set);
  }
  for (const [tld, origin] of after) {
    const was = before.get(tld);
    if (was && was.provider === origin.provider) continue;
    if ((providers.get(tld)?.size ?? 0) > 1) return true;
  }
  return false;
}
