import type { Domain, DomainWithRecords } from "../domain/types.js";
import { computeBaseSignals } from "../scoring/base-signals.js";
import {
  earliestTldOrigins,
  type ScoringFacts,
  type ScoringIndex,
  scoringContext,
} from "../scoring/scoring-index.js";
import type { ScoringLists } from "../scoring/scoring-lists.js";
import type { BaseSignals } from "../scoring/scoring.types.js";
import { skeleton } from "../scoring/skeleton.js";
import type { ScoringData } from "../store/scoring-data.port.js";
import type { Store } from "../store/store.js";
import { saveScoringState } from "./scoring-state.js";

/** What the rescore job reads and writes: the map, the scoring data, and transactions. */
export type RescoreStore = Pick<Store, "domainMap" | "scoring" | "transaction">;

/** Names whose skeleton is filled per round trip. */
const SKELETON_PAGE = 5000;
/** Lookalike groups read per page; their domains are read at most this many names at a time. */
const GROUP_PAGE = 200;
const GROUP_NAMES = 400;

/**
 * Stores the TR39 skeleton of every indexed name that has none yet: the names that arrived since
 * the last pass (the index's triggers add a name's row, JS computes its skeleton). Returns how many.
 */
export async function fillSkeletons(store: ScoringData): Promise<number> {
  let filled = 0;
  for (;;) {
    const names = await store.findNamesWithoutSkeleton(SKELETON_PAGE);
    if (names.length === 0) return filled;
    await store.setNameSkeletons(names.map((name) => ({ name, skeleton: skeleton(name) })));
    filled += names.length;
  }
}

/**
 * In each group of lookalikes the name with the best provisional score (base rules without the
 * confusable rule; then earliest registration; then code-point order) is the original, and every
 * other name imitates it.
 */
function rankGroup(
  group: readonly string[],
  domains: ReadonlyMap<string, DomainWithRecords[]>,
  ctx: ReturnType<typeof scoringContext>,
  imitated: Map<string, string>,
): void {
  const best = new Map<string, { score: number; registeredAt: number }>();
  for (const name of group) {
    for (const d of domains.get(name) ?? []) {
      const s = computeBaseSignals(d, d.records, ctx).baseScore;
      const at = d.registeredAt ?? Number.MAX_SAFE_INTEGER;
      const b = best.get(d.name);
      if (!b) best.set(d.name, { score: s, registeredAt: at });
      else best.set(d.name, { score: Math.max(b.score, s), registeredAt: Math.min(b.registeredAt, at) });
    }
  }
  const ranked = [...best.entries()].sort(
    ([an, a], [bn, b]) =>
      b.score - a.score || a.registeredAt - b.registeredAt || (an < bn ? -1 : an > bn ? 1 : 0),
  );
  if (ranked.length < 2) return;
  const original = ranked[0][0];
  for (const [name] of ranked.slice(1)) imitated.set(name, original);
}

/** Ranks the groups of one page, reading their domains a few hundred names at a time. */
async function rankGroups(
  store: Pick<Store, "domainMap" | "scoring">,
  groups: readonly string[][],
  lists: ScoringLists,
  tldOrigins: ScoringFacts["tldOrigins"],
  imitated: Map<string, string>,
): Promise<void> {
  for (let i = 0; i < groups.length; ) {
    const batch: string[][] = [];
    let size = 0;
    while (i < groups.length && (batch.length === 0 || size + groups[i].length <= GROUP_NAMES)) {
      size += groups[i].length;
      batch.push(groups[i++]);
    }
    const names = batch.flat();
    const ctx = scoringContext(lists, {
      tldOrigins,
      holders: await store.scoring.findNameHolders(names),
      imitated: new Map(),
    });
    const domains = new Map<string, DomainWithRecords[]>();
    for (const d of await store.domainMap.findDomainsByName(names, {})) {
      const list = domains.get(d.name);
      if (list) list.push(d);
      else domains.set(d.name, [d]);
    }
    for (const group of batch) rankGroup(group, domains, ctx, imitated);
  }
}

/**
 * The index-wide facts a pass keeps in memory: the TLD origins (one entry per TLD) and the
 * lookalikes (one entry per imitating name: groups of equal skeletons are rare). Both are read
 * from indexes the store keeps on every write (migration 0009, tld_registrations), in pages; how
 * many domains hold a name is looked up per page of domains (withHolders) instead.
 */
export async function buildScoringIndex(
  store: Pick<Store, "domainMap" | "scoring">,
  lists: ScoringLists,
): Promise<ScoringFacts> {
  const firsts = await store.scoring.listTldFirstRegistrations();
  const tldOrigins = earliestTldOrigins(
    firsts.map((f) => ({
      tld: f.tld,
      provider: f.provider,
      network: f.network,
      registeredAt: f.firstRegisteredAt,
    })),
  );
  await fillSkeletons(store.scoring);
  const imitated = new Map<string, string>();
  for await (const groups of store.scoring.iterateLookalikeGroups(GROUP_PAGE))
    await rankGroups(store, groups, lists, tldOrigins, imitated);
  return { tldOrigins, imitated };
}

/** The full index for some domains: the pass's facts plus their names' holders, read from the store. */
export async function withHolders(
  store: ScoringData,
  facts: ScoringFacts,
  domains: ReadonlyArray<Pick<Domain, "name">>,
): Promise<ScoringIndex> {
  return { ...facts, holders: await store.findNameHolders(domains.map((d) => d.name)) };
}

export interface RescoreStats {
  scanned: number;
  updated: number;
}

function sameSignals(a: Domain, b: BaseSignals): boolean {
  return (
    a.baseScore === b.baseScore &&
    a.spam === b.spam &&
    a.csamOk === b.csamOk &&
    a.kyc === b.kyc &&
    a.tags.length === b.tags.length &&
    a.tags.every((t, i) => t === b.tags[i])
  );
}

function signalsOf(s: BaseSignals): BaseSignals {
  return { baseScore: s.baseScore, spam: s.spam, csamOk: s.csamOk, kyc: s.kyc, tags: s.tags };
}

/** Scores one page of domains and writes those whose signals changed, in one transaction. */
export async function rescorePage(
  store: RescoreStore,
  page: readonly DomainWithRecords[],
  lists: ScoringLists,
  facts: ScoringFacts,
): Promise<number> {
  const ctx = scoringContext(lists, await withHolders(store.scoring, facts, page));
  const changes = page
    .map((d) => ({ id: d.id, s: computeBaseSignals(d, d.records, ctx), d }))
    .filter((c) => !sameSignals(c.d, c.s));
  if (changes.length === 0) return 0;
  await store.transaction((tx) =>
    tx.domainMap.updateDomainSignalsMany(changes.map((c) => ({ id: c.id, signals: signalsOf(c.s) }))),
  );
  return changes.length;
}

/**
 * Recomputes the stored signals of every domain: after a crawl (TLD origins and lookalikes change
 * as names arrive), a KYC import, a new blocklist or ICANN list. Streams the map in pages (keyset
 * by id), each page's holders read from the collision index: memory holds one page plus the
 * facts (buildScoringIndex), whatever the map's size. Writes only what changed, one transaction
 * per page. Returns the facts, for writers that score new domains afterwards (the crawler), and
 * how many names are held more than once.
 */
export async function rescoreAll(
  store: RescoreStore,
  lists: ScoringLists,
  opts: { pageSize?: number; signal?: AbortSignal } = {},
): Promise<RescoreStats & { index: ScoringFacts; collisions: number }> {
  const index = await buildScoringIndex(store, lists);
  let scanned = 0;
  let updated = 0;
  for await (const page of store.domainMap.iterateDomains(opts.pageSize ?? 1000)) {
    // Stopped (the process is shutting down): what is written stays, the next pass starts over.
    if (opts.signal?.aborted) return { scanned, updated, index, collisions: 0 };
    scanned += page.length;
    updated += await rescorePage(store, page, lists, index);
  }
  // What this pass scored with: a later pass with the same lists scores only what changed.
  await saveScoringState(store.scoring, lists, index);
  return { scanned, updated, index, collisions: await store.scoring.countSharedNames() };
}

/**
 * Recomputes the stored signals of some domains (the owners' a KYC import changed) with the given
 * facts, a page of ids at a time, each page's holders read from the collision index.
 */
export async function rescoreDomains(
  store: RescoreStore,
  ids: readonly number[],
  lists: ScoringLists,
  facts: ScoringFacts,
  opts: { pageSize?: number } = {},
): Promise<RescoreStats> {
  const size = opts.pageSize ?? 500;
  let updated = 0;
  for (let i = 0; i < ids.length; i += size) {
    const page: DomainWithRecords[] = [];
    for (const id of ids.slice(i, i + size)) {
      const d = await store.domainMap.findDomainById(id);
      if (d) page.push({ ...d, records: await store.domainMap.findRecords(id) });
    }
    updated += await rescorePage(store, page, lists, facts);
  }
  return { scanned: ids.length, updated };
}
