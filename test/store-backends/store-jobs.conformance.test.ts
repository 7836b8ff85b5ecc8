import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/store/crawler-log.port.js";
import type { Store } from "../../src/store/store.js";
import { ALICE, BOB, STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

/** The queries behind the store jobs (rescore, KYC import, index clearing, snapshots), on every backend. */
const T0 = 1_700_000_000_000;
const CAROL = "0x00000000000000000000000000000000000ca201";

function entry(block: number, logIndex: number, tokenId: string | null = tokenIdOf(1)): JournalEntry {
  return {
    sourceId: "src-a",
    chainId: 137,
    blockNumber: block,
    blockHash: `0xb${block}`,
    logIndex,
    txHash: `0xt${block}${logIndex}`,
    contract: "0xc0",
    tokenId,
    event: `{"block":${block}}`,
    blockTime: null,
  };
}

describe.each(STORE_BACKENDS)("store jobs' queries: $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
  });
  afterAll(async () => {
    await cleanup();
  });
  beforeEach(async () => {
    await store.clearChainIndex();
    await store.scoring.importKycAddresses([], { replace: true });
  });

  it("lists each TLD's first registration per namespace, unknown times as null", async () => {
    await store.domainMap.upsertDomain(testDomain({ name: "a.web3", tld: "web3", registeredAt: T0 + 10 }));
    await store.domainMap.upsertDomain(
      testDomain({ name: "b.web3", tld: "web3", tokenId: tokenIdOf(2), registeredAt: T0 }),
    );
    await store.domainMap.upsertDomain(
      testDomain({
        name: "c.web3",
        tld: "web3",
        provider: "NAMESPACE_B",
        network: "ETHEREUM",
        tokenId: tokenIdOf(3),
        registeredAt: null,
      }),
    );
    await store.domainMap.upsertDomain(
      testDomain({ name: "x.com", tld: "com", tokenId: tokenIdOf(4), registeredAt: T0 + 5 }),
    );
    const rows = (await store.scoring.listTldFirstRegistrations()).sort(
      (a, b) => a.tld.localeCompare(b.tld) || a.provider.localeCompare(b.provider),
    );
    expect(rows).toEqual([
      { tld: "com", provider: "NAMESPACE_A", network: "POLYGON", firstRegisteredAt: T0 + 5 },
      { tld: "web3", provider: "NAMESPACE_A", network: "POLYGON", firstRegisteredAt: T0 },
      { tld: "web3", provider: "NAMESPACE_B", network: "ETHEREUM", firstRegisteredAt: null },
    ]);
  });

  it("finds the names held by two or more domains, with the count", async () => {
    await store.domainMap.upsertDomain(testDomain({ name: "first.web3" }));
    await store.domainMap.upsertDomain(
      testDomain({ name: "first.web3", provider: "NAMESPACE_B", network: "ETHEREUM", tokenId: tokenIdOf(2) }),
    );
    await store.domainMap.upsertDomain(
      testDomain({ name: "first.web3", provider: "NAMESPACE_C", tokenId: tokenIdOf(3) }),
    );
    await store.domainMap.upsertDomain(testDomain({ name: "alone.web3", tokenId: tokenIdOf(4) }));
    expect(await store.scoring.findSharedNames()).toEqual(new Map([["first.web3", 3]]));
  });

  it("finds the names on (provider, network) pairs or expired by a time, distinct and sorted", async () => {
    await store.domainMap.upsertDomain(testDomain({ name: "b.web3" }));
    await store.domainMap.upsertDomain(testDomain({ name: "b.web3", tokenId: tokenIdOf(2), network: "BSC" }));
    await store.domainMap.upsertDomain(
      testDomain({ name: "a.web3", tokenId: tokenIdOf(3), provider: "NAMESPACE_B", network: "ETHEREUM" }),
    );
    await store.domainMap.upsertDomain(
      testDomain({ name: "old.web3", tokenId: tokenIdOf(4), network: "AURORA", expiresAt: T0 }),
    );
    await store.domainMap.upsertDomain(
      testDomain({ name: "later.web3", tokenId: tokenIdOf(5), network: "AURORA", expiresAt: T0 + 9 }),
    );
    expect(await store.scoring.findNamesOnPairs([], null)).toEqual([]);
    expect(await store.scoring.findNamesOnPairs([{ provider: "NAMESPACE_A", network: "BSC" }], null)).toEqual(
      ["b.web3"],
    );
    expect(
      await store.scoring.findNamesOnPairs(
        [
          { provider: "NAMESPACE_A", network: "POLYGON" },
          { provider: "NAMESPACE_B", network: "ETHEREUM" },
        ],
        null,
      ),
    ).toEqual(["a.web3", "b.web3"]);
    expect(await store.scoring.findNamesOnPairs([], T0)).toEqual(["old.web3"]);
    expect(
      await store.scoring.findNamesOnPairs([{ provider: "NAMESPACE_A", network: "BSC" }], T0 + 9),
    ).toEqual(["b.web3", "later.web3", "old.web3"]);
    // In keyset pages (a settings job's phase 0): after a name, at most `limit`, a name once.
    const bsc = [{ provider: "NAMESPACE_A", network: "BSC" }] as const;
    const page = (after: string | null, limit: number) =>
      store.scoring.findNamesOnPairs(bsc, T0 + 9, { after, limit });
    expect(await page(null, 1)).toEqual(["b.web3"]);
    expect(await page("b.web3", 1)).toEqual(["later.web3"]);
    expect(await page("later.web3", 5)).toEqual(["old.web3"]);
    expect(await page("old.web3", 5)).toEqual([]);
  });

  it("loads ranking candidates by name without records, in id order, past one IN list", async () => {
    await store.domainMap.upsertDomain(testDomain({ name: "b.web3" }));
    const id = await store.domainMap.upsertDomain(
      testDomain({ name: "b.web3", tokenId: tokenIdOf(2), network: "BSC" }),
    );
    await store.domainMap.replaceRecords(id, [{ key: "k", value: "v", nativeKey: "k", nativeValue: "v" }]);
    await store.domainMap.upsertDomain(testDomain({ name: "c.web3", tokenId: tokenIdOf(3) }));
    const many = Array.from({ length: 1200 }, (_, i) => `nope${i}.web3`);
    const found = await store.scoring.findRankingCandidates([...many, "b.web3", "zzz\u0000.web3"]);
    expect(found.map((d) => [d.name, d.network, d.records])).toEqual([
      ["b.web3", "POLYGON", []],
      ["b.web3", "BSC", []],
    ]);
    expect(await store.scoring.findRankingCandidates([])).toEqual([]);
  });

  it("iterates every domain's name in id order, in pages, one entry per domain", async () => {
    const names = ["e.web3", "a.web3", "e.web3", "c.web3", "b.web3"];
    for (const [i, name] of names.entries())
      await store.domainMap.upsertDomain(
        testDomain({ name, tokenId: tokenIdOf(i + 1), network: i === 2 ? "BSC" : "POLYGON" }),
      );
    const pages: string[][] = [];
    for await (const page of store.scoring.iterateDomainNames(2)) pages.push(page);
    expect(pages).toEqual([["e.web3", "a.web3"], ["e.web3", "c.web3"], ["b.web3"]]);
  });

  it("finds the ids of the domains of many owners, past one query's parameter list", async () => {
    const a = await store.domainMap.upsertDomain(testDomain());
    const b = await store.domainMap.upsertDomain(
      testDomain({ name: "bob.wallet", tokenId: tokenIdOf(2), owner: BOB }),
    );
    await store.domainMap.upsertDomain(
      testDomain({ name: "carol.wallet", tokenId: tokenIdOf(3), owner: CAROL }),
    );
    const strangers = Array.from({ length: 700 }, (_, i) => `0x${i.toString(16).padStart(40, "f")}`);
    const ids = await store.scoring.findDomainIdsByOwners([...strangers, ALICE, BOB]);
    expect(ids.sort((x, y) => x - y)).toEqual([a, b]);
    expect(await store.scoring.findDomainIdsByOwners([])).toEqual([]);
  });

  it("imports KYC addresses, reports what changed, and replaces the list", async () => {
    expect(await store.scoring.importKycAddresses([ALICE, BOB, ALICE], { source: "kyc.csv" })).toEqual({
      added: [ALICE, BOB],
      removed: [],
      total: 2,
    });
    expect(await store.scoring.importKycAddresses([BOB])).toEqual({ added: [], removed: [], total: 2 });
    expect(await store.scoring.findKycOwners()).toEqual(new Set([ALICE, BOB]));
    expect(await store.scoring.importKycAddresses([BOB, CAROL], { replace: true })).toEqual({
      added: [CAROL],
      removed: [ALICE],
      total: 2,
    });
    expect(await store.scoring.findKycOwners()).toEqual(new Set([BOB, CAROL]));
  });

  it("imports KYC addresses inside a caller's transaction, and rolls back with it", async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.scoring.importKycAddresses([ALICE]);
        expect(await tx.scoring.findKycOwners()).toEqual(new Set([ALICE]));
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await store.scoring.findKycOwners()).toEqual(new Set());
  });

  it("lists every reverse record and pages through the whole journal (snapshot reads)", async () => {
    const a = await store.domainMap.upsertDomain(testDomain());
    const b = await store.domainMap.upsertDomain(
      testDomain({ name: "bob.wallet", tokenId: tokenIdOf(2), owner: BOB }),
    );
    // Inserted out of address order: the list is in address order (BOB's address sorts first).
    await store.domainMap.setReverse({
      network: "POLYGON",
      provider: "NAMESPACE_A",
      address: ALICE,
      domainId: a,
    });
    await store.domainMap.setReverse({
      network: "POLYGON",
      provider: "NAMESPACE_A",
      address: BOB,
      domainId: b,
    });
    expect(await store.domainMap.listReverseRecords()).toEqual([
      { network: "POLYGON", provider: "NAMESPACE_A", address: BOB, domainId: b },
      { network: "POLYGON", provider: "NAMESPACE_A", address: ALICE, domainId: a },
    ]);
    const entries = [entry(12, 0), entry(10, 1), entry(10, 0, null)];
    await store.crawlerLog.appendJournal(entries);
    const pages: JournalEntry[][] = [];
    for await (const page of store.crawlerLog.iterateJournal(2)) pages.push(page);
    expect(pages).toEqual([entries.slice(0, 2), entries.slice(2)]);
  });

  it("clears what was indexed from chains and keeps projects, keys and the KYC list", async () => {
    const id = await store.domainMap.upsertDomain(testDomain());
    await store.domainMap.replaceRecords(id, [{ key: "k", value: "v", nativeKey: "k", nativeValue: "v" }]);
    await store.domainMap.setReverse({
      network: "POLYGON",
      provider: "NAMESPACE_A",
      address: ALICE,
      domainId: id,
    });
    await store.crawlerLog.appendJournal([entry(10, 0)]);
    const checkpoint = {
      sourceId: "src-a",
      chainId: 137,
      blockNumber: 10,
      blockHash: "0xb10",
      updatedAt: T0,
      state: "live",
      error: null,
    };
    await store.crawlerLog.setCheckpoint(checkpoint);
    await store.crawlerLog.putRecentBlocks("src-a", [
      { blockNumber: 10, blockHash: "0xb10", parentHash: "0xb9" },
    ]);
    const project = await store.projects.createProject({ name: `keep-${backend.name}-${Date.now()}` });
    const key = await store.projects.insertApiKey({
      projectId: project.id,
      name: "k",
      prefix: "on_x",
      hash: `h-${project.id}`,
    });
    await store.scoring.importKycAddresses([ALICE]);

    await store.clearChainIndex();

    expect(await store.domainMap.countDomains()).toBe(0);
    expect(await store.domainMap.findRecords(id)).toEqual([]);
    expect(await store.domainMap.listReverseRecords()).toEqual([]);
    expect(await store.crawlerLog.findJournalAfter("src-a", 0)).toEqual([]);
    expect(await store.crawlerLog.listCheckpoints()).toEqual([]);
    expect(await store.crawlerLog.findRecentBlocks("src-a", 0)).toEqual([]);
    expect(await store.projects.findProjectById(project.id)).toEqual(project);
    expect(await store.projects.findApiKeyByHash(`h-${project.id}`)).toEqual(key);
    expect(await store.scoring.findKycOwners()).toEqual(new Set([ALICE]));
  });
});
