import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { Domain } from "../domain/types.js";
import type { Store } from "../store/store.js";
import { computeBaseSignals } from "./base-signals.js";
import { isEarlierOrigin } from "./rules/origin-provider.rule.js";
import type { ScoringLists } from "./scoring-lists.js";
import type { BaseSignals, BaseSignalsContext, TldOrigin } from "./scoring.types.js";
import { skeleton } from "./skeleton.js";

/** What only the whole index knows: TLD origins, names held more than once, lookalikes. */
export interface ScoringIndex {
  tldOrigins: ReadonlyMap<string, TldOrigin>;
  /** Names held by two or more domains, with the count. */
  holders: ReadonlyMap<string, number>;
  /** Lookalike name → the different, higher-scored name it imitates. */
  imitated: ReadonlyMap<string, string>;
}

export const EMPTY_INDEX: ScoringIndex = { tldOrigins: new Map(), holders: new Map(), imitated: new Map() };

/** The full context of the base rules: the operator's lists plus the index lookups. */
export function scoringContext(lists: ScoringLists, index: ScoringIndex = EMPTY_INDEX): BaseSignalsContext {
  return {
    ...lists,
    tldOrigin: (tld) => index.tldOrigins.get(tld) ?? null,
    holders: (name) => index.holders.get(name) ?? 1,
    imitated: (name) => index.imitated.get(name) ?? null,
  };
}

const PAGE = 5000;

async function tldOrigins(store: Store): Promise<Map<string, TldOrigin>> {
  const rows = await store.db
    .selectFrom("domains")
    .select(["tld", "provider", "network", (eb) => eb.fn.min("registered_at").as("first")])
    .groupBy(["tld", "provider", "network"])
    .execute();
  const out = new Map<string, TldOrigin>();
  for (const r of rows) {
    const o: TldOrigin = {
      provider: r.provider as Provider,
      network: r.network as Network,
      registeredAt: r.first === null ? null : Number(r.first),
    };
    const known = out.get(r.tld);
    if (!known || isEarlierOrigin(o, known)) out.set(r.tld, o);
  }
  return out;
}

async function holders(store: Store): Promise<Map<string, number>> {
  const rows = await store.db
    .selectFrom("domains")
    .select(["name", (eb) => eb.fn.countAll().as("n")])
    .groupBy("name")
    .having((eb) => eb.fn.countAll(), ">", 1)
    .execute();
  return new Map(rows.map((r) => [r.name, Number(r.n)]));
}

/** Groups of two or more different indexed names with the same TR39 skeleton. */
async function skeletonGroups(store: Store): Promise<string[][]> {
  const bySkeleton = new Map<string, string | string[]>();
  let after = 0;
  for (;;) {
    const rows = await store.db
      .selectFrom("domains")
      .select(["id", "name"])
      .where("id", ">", after)
      .orderBy("id")
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    after = Number(rows[rows.length - 1].id);
    for (const { name } of rows) {
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
  store: Store,
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
export async function buildScoringIndex(store: Store, lists: ScoringLists): Promise<ScoringIndex> {
  const partial: ScoringIndex = {
    tldOrigins: await tldOrigins(store),
    holders: await holders(store),
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
  store: Store,
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
  store: Store,
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

/** Ids of the domains owned by these addresses (lower case), for rescoring after a KYC change. */
export async function domainIdsOfOwners(store: Store, owners: readonly string[]): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < owners.length; i += 500) {
    const rows = await store.db
      .selectFrom("domains")
      .select("id")
      .where("owner", "in", owners.slice(i, i + 500))
      .execute();
    for (const r of rows) ids.push(Number(r.id));
  }
  return ids;
}
