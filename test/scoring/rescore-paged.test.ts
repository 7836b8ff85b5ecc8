import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureBaseTime, fixtureWorld } from "../../src/devnet/fixtures.js";
import { buildScoringIndex, rescoreAll, rescoreDomains } from "../../src/jobs/rescore.job.js";
import { computeBaseSignals } from "../../src/scoring/base-signals.js";
import { loadIcannTlds } from "../../src/scoring/iana-tlds.js";
import { earliestTldOrigins, type ScoringIndex, scoringContext } from "../../src/scoring/scoring-index.js";
import type { ScoringLists } from "../../src/scoring/scoring-lists.js";
import type { BaseSignals } from "../../src/scoring/scoring.types.js";
import { skeleton } from "../../src/scoring/skeleton.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { TEST_CSAM_TERMS } from "./helpers/scoring-fixtures.js";
import { type SeedDomain, seedDomains } from "./helpers/seed-fixtures.js";

/**
 * The paged rescoring (collision and skeleton indexes read per page) writes exactly the signals
 * of the whole-map computation it replaced, kept here as the reference: findSharedNames into a
 * Map, every name's skeleton into a Map, then every domain scored with both.
 */
async function referenceSignals(store: Store, lists: ScoringLists): Promise<Map<number, BaseSignals>> {
  const firsts = await store.scoring.listTldFirstRegistrations();
  const partial: ScoringIndex = {
    tldOrigins: earliestTldOrigins(
      firsts.map((f) => ({
        tld: f.tld,
        provider: f.provider,
        network: f.network,
        registeredAt: f.firstRegisteredAt,
      })),
    ),
    holders: await store.scoring.findSharedNames(),
    imitated: new Map(),
  };
  const bySkeleton = new Map<string, Set<string>>();
  for await (const names of store.scoring.iterateDomainNames(7))
    for (const n of names) bySkeleton.set(skeleton(n), (bySkeleton.get(skeleton(n)) ?? new Set()).add(n));
  const ctx = scoringContext(lists, partial);
  const imitated = new Map<string, string>();
  for (const group of [...bySkeleton.values()].filter((g) => g.size > 1)) {
    const best = new Map<string, { score: number; at: number }>();
    for (const d of await store.domainMap.findDomainsByName([...group], {})) {
      const s = computeBaseSignals(d, d.records, ctx).baseScore;
      const at = d.registeredAt ?? Number.MAX_SAFE_INTEGER;
      const b = best.get(d.name);
      best.set(d.name, b ? { score: Math.max(b.score, s), at: Math.min(b.at, at) } : { score: s, at });
    }
    const ranked = [...best].sort(
      ([an, a], [bn, b]) => b.score - a.score || a.at - b.at || (an < bn ? -1 : 1),
    );
    for (const [name] of ranked.slice(1)) imitated.set(name, ranked[0][0]);
  }
  const full = scoringContext(lists, { ...partial, imitated });
  const out = new Map<number, BaseSignals>();
  for await (const page of store.domainMap.iterateDomains(50)) {
    for (const d of page) {
      const s = computeBaseSignals(d, d.records, full);
      out.set(d.id, { baseScore: s.baseScore, spam: s.spam, csamOk: s.csamOk, kyc: s.kyc, tags: s.tags });
    }
  }
  return out;
}

async function storedSignals(store: Store): Promise<Map<number, BaseSignals>> {
  const out = new Map<number, BaseSignals>();
  for await (const page of store.domainMap.iterateDomains(50))
    for (const d of page)
      out.set(d.id, { baseScore: d.baseScore, spam: d.spam, csamOk: d.csamOk, kyc: d.kyc, tags: d.tags });
  return out;
}

const DAY = 24 * 3600 * 1000;
const OWNER = "0x00000000000000000000000000000000000000ee";
/** Lookalikes of fixture names and of each other, across namespaces, some held twice. */
const LOOKALIKES: SeedDomain[] = [
  ["NAMESPACE_B", "ETHEREUM", "\u0430lice.wallet", 3],
  ["NAMESPACE_C", "POLYGON", "alice.wa1let", 4],
  ["NAMESPACE_A", "BSC", "rnoon.wallet", 5],
  ["NAMESPACE_B", "POLYGON", "rnoon.wallet", 6],
  ["NAMESPACE_A", "POLYGON", "paypal.x", null],
  ["NAMESPACE_B", "ETHEREUM", "p\u0430ypal.x", 1],
  ["NAMESPACE_C", "POLYGON", "paypa1.x", 2],
].map(([provider, network, name, day]) => ({
  provider: provider as SeedDomain["provider"],
  network: network as SeedDomain["network"],
  name: name as string,
  owner: OWNER,
  records: [],
  registeredAt: day === null ? null : fixtureBaseTime() + (day as number) * DAY,
  expiresAt: null,
}));

describe.each(STORE_BACKENDS)("paged rescoring on $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let ids: number[];
  const lists = (kyc: Set<string>): ScoringLists => ({
    csamTerms: [...TEST_CSAM_TERMS],
    blocklist: { names: new Set(["traded.nft"]), tlds: new Set() },
    kycOwners: kyc,
    icannTlds: loadIcannTlds({}),
  });

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    ids = [...(await seedDomains(store, [...fixtureWorld().domains, ...LOOKALIKES])).values()];
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it("rescores some domains (the KYC import's path) with the reference's signals", async () => {
    const l = lists(new Set([fixtureWorld().owners.alice]));
    const facts = await buildScoringIndex(store, l);
    expect(facts.imitated.size).toBeGreaterThan(3);
    await rescoreDomains(store, ids, l, facts, { pageSize: 4 });
    const expected = await referenceSignals(store, l);
    expect(await storedSignals(store)).toEqual(expected);
  });

  it("rescores the whole map in small pages with the reference's signals, then writes nothing", async () => {
    const l = lists(new Set([OWNER]));
    const first = await rescoreAll(store, l, { pageSize: 3 });
    expect(first.updated).toBeGreaterThan(0);
    expect(first.collisions).toBe((await store.scoring.findSharedNames()).size);
    expect(await storedSignals(store)).toEqual(await referenceSignals(store, l));
    expect((await rescoreAll(store, l, { pageSize: 5 })).updated).toBe(0);
  });
});
