import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imitationChanges, originsMoved, rescoreChanged } from "../../src/jobs/rescore-changed.job.js";
import type { ScoringLists } from "../../src/scoring/scoring-lists.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { type SeedDomain, seedDomains } from "./helpers/seed-fixtures.js";

const T0 = Date.UTC(2024, 0, 1);
const OWNER = "0x00000000000000000000000000000000000000aa";

function lists(blocked: string[] = []): ScoringLists {
  return {
    csamTerms: [],
    blocklist: { names: new Set(blocked), tlds: new Set() },
    kycOwners: new Set(),
    icannTlds: new Set(["com"]),
  };
}

function domain(name: string, over: Partial<SeedDomain> = {}): SeedDomain {
  return {
    provider: "NAMESPACE_A",
    network: "BSC",
    name,
    owner: OWNER,
    records: [],
    registeredAt: T0,
    expiresAt: null,
    ...over,
  };
}

describe("what an incremental pass rescans", () => {
  it.each([
    { title: "nothing changed", before: [["a", "b"]], after: [["a", "b"]], want: [] },
    { title: "a new lookalike", before: [], after: [["a", "b"]], want: ["a"] },
    { title: "a lookalike gone", before: [["a", "b"]], after: [], want: ["a"] },
    { title: "another original", before: [["a", "b"]], after: [["a", "c"]], want: ["a"] },
  ])("imitations: $title", ({ before, after, want }) => {
    const m = (xs: string[][]) => new Map(xs.map(([k, v]) => [k, v] as [string, string]));
    expect(imitationChanges(m(before), m(after))).toEqual(want);
  });

  const A = { provider: "NAMESPACE_A", network: "BSC", registeredAt: T0 } as const;
  const B = { provider: "NAMESPACE_B", network: "POLYGON", registeredAt: T0 - 1 } as const;
  const reg = (provider: "NAMESPACE_A" | "NAMESPACE_B") => ({
    tld: "web3",
    provider,
    network: provider === "NAMESPACE_A" ? ("BSC" as const) : ("POLYGON" as const),
    firstRegisteredAt: T0,
  });
  it.each([
    {
      title: "same origin",
      before: A,
      after: A,
      regs: [reg("NAMESPACE_A"), reg("NAMESPACE_B")],
      want: false,
    },
    {
      title: "a new TLD of one namespace",
      before: undefined,
      after: A,
      regs: [reg("NAMESPACE_A")],
      want: false,
    },
    {
      title: "a new TLD of two namespaces",
      before: undefined,
      after: A,
      regs: [reg("NAMESPACE_A"), reg("NAMESPACE_B")],
      want: true,
    },
    {
      title: "the origin moved, one namespace left",
      before: B,
      after: A,
      regs: [reg("NAMESPACE_A")],
      want: false,
    },
    {
      title: "the origin moved, two namespaces",
      before: A,
      after: B,
      regs: [reg("NAMESPACE_A"), reg("NAMESPACE_B")],
      want: true,
    },
  ])("TLD origins: $title", ({ before, after, regs, want }) => {
    const b = new Map(before ? [["web3", before]] : []);
    expect(originsMoved(b, new Map([["web3", after]]), regs)).toBe(want);
  });
});

describe.each(STORE_BACKENDS)("incremental rescoring on $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  const tagsOf = async (name: string) =>
    (await store.domainMap.findDomainsByName([name], {})).map((d) => d.tags).sort();

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    await seedDomains(store, [domain("x.web3"), domain("y.web3"), domain("z.web3")]);
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it("scores everything once, then nothing while nothing changes", async () => {
    const first = await rescoreChanged(store, lists());
    expect(first).toMatchObject({ mode: "full", scanned: 3 });
    const second = await rescoreChanged(store, lists());
    expect(second).toMatchObject({ mode: "changed", scanned: 0, updated: 0 });
  });

  it("a second holder makes the name unscored; the pass tags both domains and scans nothing else", async () => {
    await seedDomains(store, [
      domain("x.web3", { provider: "NAMESPACE_B", network: "POLYGON", registeredAt: T0 + 5 }),
    ]);
    expect(await store.scoring.findUnscoredNames(10)).toEqual([{ name: "x.web3", version: 1 }]);
    const r = await rescoreChanged(store, lists());
    expect(r).toMatchObject({ mode: "changed", scanned: 2, updated: 2 });
    for (const tags of await tagsOf("x.web3")) expect(tags).toContain("collision");
    expect(await store.scoring.findUnscoredNames(10)).toEqual([]);
  });

  it("a third holder changes nothing the scoring sees: the name stays scored", async () => {
    await seedDomains(store, [domain("x.web3", { network: "AURORA", registeredAt: T0 + 6 })]);
    expect(await store.scoring.findUnscoredNames(10)).toEqual([]);
  });

  it("down to one holder: unscored again, and the pass drops the tag", async () => {
    for (const d of await store.domainMap.findDomainsByName(["x.web3"], {}))
      if (d.network !== "BSC") await store.domainMap.deleteDomain(d.id);
    expect((await store.scoring.findUnscoredNames(10)).map((u) => u.name)).toEqual(["x.web3"]);
    await rescoreChanged(store, lists());
    expect(await tagsOf("x.web3")).toEqual([expect.not.arrayContaining(["collision"])]);
  });

  it("two holders written in one statement start unscored", async () => {
    const base = (await store.domainMap.findDomainsByName(["y.web3"], {}))[0];
    const w = (network: "POLYGON" | "AURORA", tokenId: string) => ({
      ...base,
      network,
      tokenId,
      name: "w.web3",
      sld: "w",
    });
    await store.domainMap.upsertDomains([w("POLYGON", "0x01"), w("AURORA", "0x02")]);
    expect((await store.scoring.findUnscoredNames(10)).map((u) => u.name)).toEqual(["w.web3"]);
    await rescoreChanged(store, lists());
    for (const tags of await tagsOf("w.web3")) expect(tags).toContain("collision");
  });

  it("a version that moved after it was read is not marked scored", async () => {
    await seedDomains(store, [domain("v.web3"), domain("v.web3", { network: "POLYGON" })]);
    const [read] = await store.scoring.findUnscoredNames(10);
    expect(read.name).toBe("v.web3");
    const polygon = (await store.domainMap.findDomainsByName(["v.web3"], {})).find(
      (d) => d.network === "POLYGON",
    );
    await store.domainMap.deleteDomain(polygon?.id ?? -1);
    await store.scoring.markNamesScored([read]);
    expect((await store.scoring.findUnscoredNames(10)).map((u) => u.name)).toEqual(["v.web3"]);
    await rescoreChanged(store, lists());
  });

  it("a new lookalike is tagged by the next pass without a full scan", async () => {
    await seedDomains(store, [
      domain("paypal.web3", { registeredAt: T0 - 100 }),
      domain("p\u0430ypal.web3", { registeredAt: T0 + 100 }),
    ]);
    const r = await rescoreChanged(store, lists());
    expect(r.mode).toBe("changed");
    expect(r.scanned).toBe(1);
    expect((await tagsOf("p\u0430ypal.web3"))[0]).toContain("confusable:paypal.web3");
  });

  it("a changed list scores everything; an interrupted pass records nothing", async () => {
    const stopped = new AbortController();
    stopped.abort();
    const before = await store.scoring.findScoringState("lists");
    const interrupted = await rescoreChanged(store, lists(["z.web3"]), { signal: stopped.signal });
    expect(interrupted.mode).toBe("full");
    expect(await store.scoring.findScoringState("lists")).toBe(before);
    const r = await rescoreChanged(store, lists(["z.web3"]));
    expect(r.mode).toBe("full");
    expect(r.scanned).toBe(await store.domainMap.countDomains());
    expect((await tagsOf("z.web3"))[0]).toContain("spam:blocklist");
    expect(await rescoreChanged(store, lists(["z.web3"]))).toMatchObject({ mode: "changed", scanned: 0 });
  });
});
