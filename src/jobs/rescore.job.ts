import type { Domain } from "../domain/types.js";
import { computeBaseSignals } from "../scoring/base-signals.js";
import { earliestTldOrigins, type ScoringIndex, scoringContext } from "../scoring/scoring-index.js";
import type { ScoringLists } from "../scoring/scoring-lists.js";
import type { BaseSignals, BaseSignalsContext } from "../scoring/scoring.types.js";
import { skeleton } from "../scoring/skeleton.js";
import type { DomainMap } from "../store/domain-map.port.js";
import type { ScoringData } from "../store/scoring-data.port.js";
import type { Store } from "../store/store.js";

/** What the rescore job reads and writes: the map, the scoring data, and transactions. */
export type RescoreStore = DomainMap & ScoringData & Pick<Store, "transaction">;

const PAGE = 5000;

/** Groups of two or more different indexed names with the same TR39 skeleton. */
async function skeletonGroups(store: ScoringData): Promise<string[][]> {
  const bySkeleton = new Map<string, string | string[]>();
  for await (const names of store.iterateDomainNames(PAGE)) {
    for (const name of names) {
      const s = skeleton(name);
      const seen = bySkeleton.get(s);
      if (seen === undefined) bySkeleton.set(s, name);
      else if (typeof seen === "string") {
        if (seen !== name) bySkeleton.set(s, [seen, name]);
      } else if (!seen.includes(name)) seen.push(name);
    }
  }
  const groups: string[][] = [];
  for (const v of bySkeleton.values()) if (typeof v !== "string") groups.push(v);
  return groups;
}

/**
 * In each group of lookalikes the name with the best provisional score (base rules without the
 * confusable rule; then earliest registration; then code-point order) is the original, and every
 * other name imitates it.
 */
async function lookalikes(
  store: DomainMap,
  groups: string[][],
  ctx: BaseSignalsContext,
): Promise<Map<string, string>> {
  const imitated = new Map<string, string>();
  for (const group of groups) {
    const best = new Map<string, { score: number; registeredAt: number }>();
    for (const d of await store.findDomainsByName(group, {})) {
      const s = computeBaseSignals(d, d.records, ctx).baseScore;
      const at = d.registeredAt ?? Number.MAX_SAFE_INTEGER;
      const b = best.get(d.name);
      if (!b) best.set(d.name, { score: s, registeredAt: at });
      else best.set(d.name, { score: Math.max(b.score, s), registeredAt: Math.min(b.registeredAt, at) });
    }
    const ranked = [...best.entries()].sort(
      ([an, a], [bn, b]) =>
        b.score - a.score || a.registeredAt - b.registeredAt || (an < bn ? -1 : an > bn ? 1 : 0),
    );
    if (ranked.length < 2) continue;
    const original = ranked[0][0];
    for (const [name] of ranked.slice(1)) imitated.set(name, original);
  }
  return imitated;
}

/** Builds the index: two grouped queries and one pass over the names, then the lookalike groups. */
export async function buildScoringIndex(
  store: DomainMap & ScoringData,
  lists: ScoringLists,
): Promise<ScoringIndex> {
  const firsts = await store.listTldFirstRegistrations();
  const partial: ScoringIndex = {
    tldOrigins: earliestTldOrigins(
      firsts.map((f) => ({
        tld: f.tld,
        provider: f.provider,
        network: f.network,
        registeredAt: f.firstRegisteredAt,
      })),
    ),
    holders: await store.findSharedNames(),
    imitated: new Map(),
  };
  const groups = await skeletonGroups(store);
  const imitated = await lookalikes(store, groups, scoringContext(lists, partial));
  return { ...partial, imitated };
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

/**
 * Recomputes the stored signals of every domain: after a crawl (TLD origins and lookalikes change
 * as names arrive), a KYC import, a new blocklist or ICANN list. Writes only what changed, one
 * transaction per page. Returns the index it built, for writers that score new domains afterwards.
 */
export async function rescoreAll(
  store: RescoreStore,
  lists: ScoringLists,
  opts: { pageSize?: number } = {},
): Promise<RescoreStats & { index: ScoringIndex }> {
  const index = await buildScoringIndex(store, lists);
  const ctx = scoringContext(lists, index);
  let scanned = 0;
  let updated = 0;
  for await (const page of store.iterateDomains(opts.pageSize ?? 1000)) {
    scanned += page.length;
    const changes = page
      .map((d) => ({ id: d.id, s: computeBaseSignals(d, d.records, ctx), d }))
      .filter((c) => !sameSignals(c.d, c.s));
    if (changes.length === 0) continue;
    await store.transaction(async (tx) => {
      for (const c of changes) await tx.updateDomainSignals(c.id, signalsOf(c.s));
    });
    updated += changes.length;
  }
  return { scanned, updated, index };
}

/**
 * Recomputes the stored signals of some domains (after a write, or for the owners a KYC import
 * changed) with the given context; `scoringContext(lists, index)` builds one from the last index.
 */
export async function rescoreDomains(
  store: DomainMap,
  ids: readonly number[],
  ctx: BaseSignalsContext,
): Promise<RescoreStats> {
  let updated = 0;
  for (const id of ids) {
    const d = await store.findDomainById(id);
    if (!d) continue;
    const s = computeBaseSignals(d, await store.findRecords(id), ctx);
    if (sameSignals(d, s)) continue;
    await store.updateDomainSignals(id, signalsOf(s));
    updated++;
  }
  return { scanned: ids.length, updated };
}
