import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { rawDb } from "../helpers/raw-db.js";
import { ALICE, BOB, STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

const domain = testDomain;
const token = tokenIdOf;

describe.each(STORE_BACKENDS)("store conformance: $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let second: () => Promise<Store>;

  beforeAll(async () => {
    ({ store, cleanup, second } = await backend.open());
  });
  afterAll(async () => {
    await cleanup();
  });
  beforeEach(async () => {
    for (const t of [
      "records",
      "reverse_records",
      "domains",
      "journal",
      "checkpoints",
      "api_keys",
      "projects",
    ] as const) {
      await rawDb(store).deleteFrom(t).execute();
    }
  });

  it("migrates idempotently and answers ping", async () => {
    await store.migrate();
    expect(await store.ping()).toBe(true);
  });

  it("upserts a domain by (network, provider, token id) and reads it back field for field", async () => {
    const d = domain({ tags: ["collision"], kyc: true, expiresAt: 1_900_000_000_000 });
    const id = await store.domainMap.upsertDomain(d);
    expect(await store.domainMap.findDomainById(id)).toEqual({ id, ...d });
    const id2 = await store.domainMap.upsertDomain({ ...d, owner: BOB, lastUpdateBlock: 11 });
    expect(id2).toBe(id);
    const again = await store.domainMap.findDomainByToken("POLYGON", "NAMESPACE_A", d.tokenId);
    expect(again?.owner).toBe(BOB);
    expect(again?.lastUpdateBlock).toBe(11);
    expect(await store.domainMap.countDomains()).toBe(1);
    expect(await store.domainMap.findDomainById(id + 999)).toBeNull();
    expect(await store.domainMap.findDomainByToken("BSC", "NAMESPACE_A", d.tokenId)).toBeNull();
  });

  it("finds domains by name across namespaces, with filters, and their records in key order", async () => {
    const a = await store.domainMap.upsertDomain(domain());
    const b = await store.domainMap.upsertDomain(
      domain({ provider: "NAMESPACE_B", network: "ETHEREUM", tokenId: token(2) }),
    );
    await store.domainMap.upsertDomain(domain({ name: "other.wallet", sld: "other", tokenId: token(3) }));
    await store.domainMap.replaceRecords(a, [
      { key: "token.ETH.0", value: ALICE, nativeKey: "token.ETH.0", nativeValue: ALICE },
      { key: "record.A.0", value: "1.2.3.4", nativeKey: "record.A.0", nativeValue: "1.2.3.4" },
    ]);
    const all = await store.domainMap.findDomainsByName(["alice.wallet"], {});
    expect(all.map((d) => d.id)).toEqual([a, b]);
    expect(all[0].records.map((r) => r.key)).toEqual(["record.A.0", "token.ETH.0"]);
    expect(all[1].records).toEqual([]);
    expect(
      (await store.domainMap.findDomainsByName(["alice.wallet"], { network: "ETHEREUM" })).map((d) => d.id),
    ).toEqual([b]);
    expect(
      (await store.domainMap.findDomainsByName(["alice.wallet"], { provider: "NAMESPACE_A" })).map(
        (d) => d.id,
      ),
    ).toEqual([a]);
    expect(await store.domainMap.findDomainsByName(["alice.wallet"], { network: "BSC" })).toEqual([]);
    expect(await store.domainMap.findDomainsByName(["nobody.wallet"], {})).toEqual([]);
    expect(await store.domainMap.findDomainsByName([], {})).toEqual([]);
    expect((await store.domainMap.findDomainsByName(["alice.wallet", "other.wallet"], {})).length).toBe(3);
  });

  it("serves a name's new state right after a commit, from this store or another process's", async () => {
    const id = await store.domainMap.upsertDomain(domain());
    expect((await store.domainMap.findDomainsByName(["alice.wallet"], {}))[0].owner).toBe(ALICE);
    await store.domainMap.upsertDomain(domain({ owner: BOB }));
    expect((await store.domainMap.findDomainsByName(["alice.wallet"], {}))[0].owner).toBe(BOB);
    await store.domainMap.setNativeRecord(id, "token.ETH.0", BOB, [{ key: "token.ETH.0", value: BOB }]);
    expect(
      (await store.domainMap.findDomainsByName(["alice.wallet"], {}))[0].records.map((r) => r.value),
    ).toEqual([BOB]);

    // A writer on another connection (a crawler process on the same database). SQLite sees its
    // commit through the WAL index before the next read; PostgreSQL when the change channel's
    // NOTIFY arrives (milliseconds; the promise is 1 s), so there the read is retried until then.
    const other = await second();
    const seenWithin = async <T>(read: () => Promise<T>, expected: T) => {
      const deadline = performance.now() + (store.dialect === "postgres" ? 1_000 : 0);
      let got = await read();
      while (JSON.stringify(got) !== JSON.stringify(expected) && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5));
        got = await read();
      }
      expect(got).toEqual(expected);
    };
    try {
      await other.domainMap.upsertDomain(domain({ owner: ALICE }));
      await other.domainMap.upsertDomain(
        domain({ provider: "NAMESPACE_B", network: "ETHEREUM", tokenId: token(2) }),
      );
      await seenWithin(
        async () =>
          (await store.domainMap.findDomainsByName(["alice.wallet"], {})).map((d) => [d.provider, d.owner]),
        [
          ["NAMESPACE_A", ALICE],
          ["NAMESPACE_B", ALICE],
        ],
      );
      await other.domainMap.deleteDomain(id);
      await seenWithin(
        async () => (await store.domainMap.findDomainsByName(["alice.wallet"], {})).map((d) => d.provider),
        ["NAMESPACE_B"],
      );
    } finally {
      await other.close();
    }
  });

  it("treats hostile names as data, never as SQL", async () => {
    await store.domainMap.upsertDomain(domain());
    for (const n of ["alice.wallet' or '1'='1", "%", "_", "alice.wallet; drop table domains", "\u0000"]) {
      expect(await store.domainMap.findDomainsByName([n], {})).toEqual([]);
    }
    expect(await store.domainMap.countDomains()).toBe(1);
  });

  it("sets a native record that maps to several canonical keys and replaces them on the next set", async () => {
    const id = await store.domainMap.upsertDomain(domain({ provider: "NAMESPACE_B", network: "ETHEREUM" }));
    await store.domainMap.setNativeRecord(id, "dns.A", '["1.1.1.1","2.2.2.2"]', [
      { key: "record.A.0", value: "1.1.1.1" },
      { key: "record.A.1", value: "2.2.2.2" },
    ]);
    await store.domainMap.setNativeRecord(id, "crypto.ETH.address", ALICE, [
      { key: "token.ETH.0", value: ALICE },
    ]);
    expect((await store.domainMap.findRecords(id)).map((r) => `${r.key}=${r.value}<${r.nativeKey}`)).toEqual([
      "record.A.0=1.1.1.1<dns.A",
      "record.A.1=2.2.2.2<dns.A",
      "token.ETH.0=0x00000000000000000000000000000000000a11ce<crypto.ETH.address",
    ]);
    await store.domainMap.setNativeRecord(id, "dns.A", '["3.3.3.3"]', [
      { key: "record.A.0", value: "3.3.3.3" },
    ]);
    expect(
      (await store.domainMap.findRecords(id)).filter((r) => r.nativeKey === "dns.A").map((r) => r.value),
    ).toEqual(["3.3.3.3"]);
    await store.domainMap.setNativeRecord(id, "dns.A", "", []);
    expect((await store.domainMap.findRecords(id)).map((r) => r.key)).toEqual(["token.ETH.0"]);
  });

  it("stores 100 KB values and any Unicode unchanged, and NUL bytes safely", async () => {
    const id = await store.domainMap.upsertDomain(domain());
    const big = "x".repeat(100_000);
    const odd = "a\u0000b 🚀 ünï";
    await store.domainMap.replaceRecords(id, [
      { key: "record.TXT.0", value: big, nativeKey: "record.TXT.0", nativeValue: big },
      { key: "record.TXT.1", value: odd, nativeKey: "record.TXT.1", nativeValue: odd },
    ]);
    const recs = await store.domainMap.findRecords(id);
    expect(recs[0].value.length).toBe(100_000);
    // NUL cannot live in PostgreSQL text: both backends store it as U+FFFD.
    expect(recs[1].value).toBe("a\ufffdb 🚀 ünï");
  });

  it("finds by owner and keeps reverse records per (address, network, provider)", async () => {
    const a = await store.domainMap.upsertDomain(domain());
    const b = await store.domainMap.upsertDomain(
      domain({ name: "bob.x", sld: "bob", tld: "x", tokenId: token(5), owner: BOB }),
    );
    expect((await store.domainMap.findDomainsByOwner(ALICE, {})).map((d) => d.id)).toEqual([a]);
    expect((await store.domainMap.findDomainsByOwner(BOB, { network: "POLYGON" })).map((d) => d.id)).toEqual([
      b,
    ]);
    await store.domainMap.setReverse({
      network: "POLYGON",
      provider: "NAMESPACE_A",
      address: ALICE,
      domainId: a,
    });
    await store.domainMap.setReverse({
      network: "POLYGON",
      provider: "NAMESPACE_A",
      address: ALICE,
      domainId: b,
    });
    expect(await store.domainMap.findReverse(ALICE, {})).toEqual([
      { network: "POLYGON", provider: "NAMESPACE_A", address: ALICE, domainId: b },
    ]);
    expect(await store.domainMap.findReverse(ALICE, { provider: "NAMESPACE_B" })).toEqual([]);
    await store.domainMap.removeReverse(ALICE, "POLYGON", "NAMESPACE_A");
    expect(await store.domainMap.findReverse(ALICE, {})).toEqual([]);
  });

  it("replaces the records of domains inserted, updated and written twice in one transaction", async () => {
    const rec = (key: string, value: string) => ({ key, value, nativeKey: key, nativeValue: value });
    // Y exists before the transaction, with records.
    const [y] = await store.domainMap.upsertDomains([
      domain({ name: "y.wallet", sld: "y", tokenId: token(21) }),
    ]);
    await store.domainMap.replaceRecordsMany([{ domainId: y, records: [rec("a", "1"), rec("b", "1")] }]);
    await store.transaction(async (tx) => {
      // X and Z are new here; Y is updated (its records must be deleted before the new ones).
      const [x, y2] = await tx.domainMap.upsertDomains([
        domain({ name: "x.wallet", sld: "x", tokenId: token(20) }),
        domain({ name: "y.wallet", sld: "y", tokenId: token(21), owner: BOB }),
      ]);
      expect(y2).toBe(y);
      await tx.domainMap.replaceRecordsMany([
        { domainId: x, records: [rec("a", "1")] },
        { domainId: y, records: [rec("a", "2")] },
      ]);
      // X again in the same transaction: its first records are there to delete now.
      await tx.domainMap.replaceRecordsMany([{ domainId: x, records: [rec("c", "3")] }]);
      // X upserted again (an update of a row this transaction inserted), records written again.
      const [x2] = await tx.domainMap.upsertDomains([
        domain({ name: "x.wallet", sld: "x", tokenId: token(20), owner: BOB }),
      ]);
      expect(x2).toBe(x);
      await tx.domainMap.replaceRecordsMany([{ domainId: x, records: [rec("d", "4")] }]);
      // Z: new, its records written one way, then the other.
      const [z] = await tx.domainMap.upsertDomains([
        domain({ name: "z.wallet", sld: "z", tokenId: token(22) }),
      ]);
      await tx.domainMap.replaceRecords(z, [rec("e", "5")]);
      await tx.domainMap.replaceRecordsMany([{ domainId: z, records: [rec("f", "6")] }]);
    });
    const byName = async (name: string) =>
      (await store.domainMap.findDomainsByName([name], {}))[0].records.map((r) => `${r.key}=${r.value}`);
    expect(await byName("x.wallet")).toEqual(["d=4"]);
    expect(await byName("y.wallet")).toEqual(["a=2"]);
    expect(await byName("z.wallet")).toEqual(["f=6"]);
  });

  it("sets and removes many reverse records at once, the last change of an address winning", async () => {
    // More domains than one PostgreSQL statement takes (5,000), so the batch runs in parts.
    const n = 5_003;
    const ids = await store.domainMap.upsertDomains(
      Array.from({ length: n }, (_, i) =>
        domain({ name: `r${i}.wallet`, sld: `r${i}`, tokenId: token(100 + i) }),
      ),
    );
    const address = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
    const set = (i: number, domainId: number | null) => ({
      network: "POLYGON" as const,
      provider: "NAMESPACE_A" as const,
      address: address(i),
      domainId,
    });
    await store.domainMap.applyReverses(ids.map((id, i) => set(i, id)));
    expect(await store.domainMap.findReverse(address(5_002), {})).toEqual([set(5_002, ids[5_002])]);
    // In a transaction (SQLite: the crawler's prepared statements) and outside it, the same rules:
    // an address set twice keeps its last domain, a removal after a set removes, a set after a
    // removal sets, a removal of an address without a record is nothing; other networks untouched.
    await store.domainMap.setReverse({
      network: "BSC",
      provider: "NAMESPACE_A",
      address: address(1),
      domainId: ids[0],
    });
    const changes = [
      set(0, ids[1]),
      set(0, ids[2]),
      set(1, ids[3]),
      set(1, null),
      set(2, null),
      set(2, ids[4]),
    ];
    await store.transaction((tx) => tx.domainMap.applyReverses([...changes, set(n + 7, null)]));
    const reverseOf = async (i: number) =>
      (await store.domainMap.findReverse(address(i), {})).map((r) => [r.network, r.domainId]);
    expect(await reverseOf(0)).toEqual([["POLYGON", ids[2]]]);
    expect(await reverseOf(1)).toEqual([["BSC", ids[0]]]);
    expect(await reverseOf(2)).toEqual([["POLYGON", ids[4]]]);
    expect(await reverseOf(n + 7)).toEqual([]);
    await store.domainMap.applyReverses([set(0, null), set(2, ids[5])]);
    expect(await reverseOf(0)).toEqual([]);
    expect(await reverseOf(2)).toEqual([["POLYGON", ids[5]]]);
    await store.domainMap.applyReverses([]);
    const count = Number(
      (
        await rawDb(store)
          .selectFrom("reverse_records")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
    // 5,003 set, address 0 and 1 removed (1 keeps its BSC record: one more row).
    expect(count).toBe(n - 2 + 1);
  });

  it("deletes a domain with its records and reverse records", async () => {
    const a = await store.domainMap.upsertDomain(domain());
    await store.domainMap.replaceRecords(a, [{ key: "k", value: "v", nativeKey: "k", nativeValue: "v" }]);
    await store.domainMap.setReverse({
      network: "POLYGON",
      provider: "NAMESPACE_A",
      address: ALICE,
      domainId: a,
    });
    await store.domainMap.deleteDomain(a);
    expect(await store.domainMap.findDomainById(a)).toBeNull();
    expect(await store.domainMap.findRecords(a)).toEqual([]);
    expect(await store.domainMap.findReverse(ALICE, {})).toEqual([]);
  });

  it("updates scoring signals and lists a TLD oldest first", async () => {
    const late = await store.domainMap.upsertDomain(domain({ registeredAt: 2_000 }));
    const early = await store.domainMap.upsertDomain(
      domain({ name: "b.wallet", sld: "b", tokenId: token(9), registeredAt: 1_000 }),
    );
    await store.domainMap.updateDomainSignals(late, {
      baseScore: 7,
      spam: true,
      csamOk: false,
      kyc: true,
      tags: ["spam:test"],
    });
    const d = await store.domainMap.findDomainById(late);
    expect([d?.baseScore, d?.spam, d?.csamOk, d?.kyc, d?.tags]).toEqual([
      7,
      true,
      false,
      true,
      ["spam:test"],
    ]);
    expect((await store.domainMap.findDomainsByTld("wallet", 10)).map((x) => x.id)).toEqual([early, late]);
  });

  it.each([
    ["directly", 1000],
    ["in a transaction (the rescore's way)", 2000],
  ])(
    "updates many domains' signals at once, past a statement's rows, leaving the others (%s)",
    async (how, base) => {
      const ids: number[] = [];
      for (let i = 0; i < 520; i++)
        ids.push(
          await store.domainMap.upsertDomain(
            domain({ name: `s${base + i}.wallet`, sld: `s${base + i}`, tokenId: token(base + i) }),
          ),
        );
      const untouched = ids.pop()!;
      const rows = ids.map((id, i) => ({
        id,
        signals: {
          baseScore: i % 100,
          spam: i % 2 === 0,
          csamOk: i % 3 !== 0,
          kyc: i % 5 === 0,
          tags: [`t:${i}`, "x"],
        },
      }));
      if (how === "directly") await store.domainMap.updateDomainSignalsMany(rows);
      else await store.transaction((tx) => tx.domainMap.updateDomainSignalsMany(rows));
      for (const i of [0, 1, 499, 500, 518]) {
        const d = await store.domainMap.findDomainById(ids[i]!);
        expect([d?.baseScore, d?.spam, d?.csamOk, d?.kyc, d?.tags]).toEqual([
          i % 100,
          i % 2 === 0,
          i % 3 !== 0,
          i % 5 === 0,
          [`t:${i}`, "x"],
        ]);
      }
      const other = await store.domainMap.findDomainById(untouched);
      expect([other?.baseScore, other?.tags]).toEqual([domain().baseScore, domain().tags]);
      await store.domainMap.updateDomainSignalsMany([]);
    },
  );

  it("iterates every domain in pages with records", async () => {
    for (let i = 0; i < 25; i++) {
      const id = await store.domainMap.upsertDomain(
        domain({ name: `n${i}.wallet`, sld: `n${i}`, tokenId: token(100 + i) }),
      );
      await store.domainMap.replaceRecords(id, [
        { key: "k", value: String(i), nativeKey: "k", nativeValue: String(i) },
      ]);
    }
    const pages: number[] = [];
    const values: string[] = [];
    for await (const page of store.domainMap.iterateDomains(10)) {
      pages.push(page.length);
      values.push(...page.map((d) => d.records[0].value));
    }
    expect(pages).toEqual([10, 10, 5]);
    expect(values).toEqual(Array.from({ length: 25 }, (_, i) => String(i)));
  });

  it("keeps checkpoints", async () => {
    expect(await store.crawlerLog.getCheckpoint("fns:POLYGON")).toBeNull();
    const cp = {
      sourceId: "fns:POLYGON",
      chainId: 137,
      blockNumber: 100,
      blockHash: "0xabc",
      updatedAt: 5,
      state: "syncing",
      error: null,
    };
    await store.crawlerLog.setCheckpoint(cp);
    await store.crawlerLog.setCheckpoint({
      ...cp,
      blockNumber: 120,
      state: "halted",
      error: "reorg too deep",
    });
    expect(await store.crawlerLog.getCheckpoint("fns:POLYGON")).toEqual({
      ...cp,
      blockNumber: 120,
      state: "halted",
      error: "reorg too deep",
    });
    expect((await store.crawlerLog.listCheckpoints()).length).toBe(1);
    await store.crawlerLog.deleteCheckpoint("fns:POLYGON");
    expect(await store.crawlerLog.listCheckpoints()).toEqual([]);
  });

  it("appends the journal once per source position and rolls back above a block", async () => {
    const entry = (block: number, logIndex: number, hash = `0xb${block}`) => ({
      sourceId: "uns:ETHEREUM",
      chainId: 1,
      blockNumber: block,
      blockHash: hash,
      logIndex,
      txHash: "0xt",
      contract: "0xc",
      tokenId: token(1),
      event: JSON.stringify({ type: "transfer" }),
    });
    const positions = async () =>
      (await store.crawlerLog.findJournalByToken("uns:ETHEREUM", token(1))).map((e) => [
        e.blockNumber,
        e.logIndex,
        e.blockHash,
      ]);
    expect(await store.crawlerLog.appendJournal([entry(1, 0), entry(1, 1), entry(2, 0)])).toBe(3);
    expect(await store.crawlerLog.appendJournal([entry(1, 0), entry(2, 0), entry(3, 0)])).toBe(1);
    // A source holds one branch (migration 0029): another branch's entry at a journaled position
    // is written only once the rollback has deleted the old one.
    expect(await store.crawlerLog.appendJournal([entry(3, 0, "0xother")])).toBe(0);
    expect(await positions()).toEqual([
      [1, 0, "0xb1"],
      [1, 1, "0xb1"],
      [2, 0, "0xb2"],
      [3, 0, "0xb3"],
    ]);
    expect(await store.crawlerLog.deleteJournalAfter("uns:ETHEREUM", 2)).toBe(1);
    expect(await store.crawlerLog.appendJournal([entry(3, 0, "0xother")])).toBe(1);
    expect((await positions()).at(-1)).toEqual([3, 0, "0xother"]);
    expect((await store.crawlerLog.findJournalAfter("uns:ETHEREUM", 1)).length).toBe(2);
    expect(await store.crawlerLog.deleteJournalAfter("uns:ETHEREUM", 1)).toBe(2);
    expect((await store.crawlerLog.findJournalAfter("uns:ETHEREUM", 0)).length).toBe(2);
  });

  it("rolls a transaction back as a whole", async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.domainMap.upsertDomain(domain());
        await tx.crawlerLog.setCheckpoint({
          sourceId: "s",
          chainId: 1,
          blockNumber: 1,
          blockHash: "0x",
          updatedAt: 1,
          state: "x",
          error: null,
        });
        throw new Error("crash in the middle");
      }),
    ).rejects.toThrow("crash in the middle");
    expect(await store.domainMap.countDomains()).toBe(0);
    expect(await store.crawlerLog.getCheckpoint("s")).toBeNull();
    await store.transaction(async (tx) => {
      await tx.domainMap.upsertDomain(domain());
    });
    expect(await store.domainMap.countDomains()).toBe(1);
  });

  it("does not show a transaction's uncommitted writes to readers", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let inside!: () => void;
    const started = new Promise<void>((r) => {
      inside = r;
    });
    const tx = store.transaction(async (t) => {
      await t.domainMap.upsertDomain(domain());
      inside();
      await gate;
    });
    await started;
    // SQLite's hot path reads on a second connection: it must not see the pending row.
    expect(await store.domainMap.findDomainsByName(["alice.wallet"], {})).toEqual([]);
    release();
    await tx;
    expect((await store.domainMap.findDomainsByName(["alice.wallet"], {})).length).toBe(1);
  });

  it("creates projects and API keys, finds live keys by hash, revokes them", async () => {
    const p = await store.projects.createProject({ name: "demo", description: "Demo" });
    expect(p).toMatchObject({ name: "demo", description: "Demo", plan: "free", settings: {} });
    expect(await store.projects.findProjectByName("demo")).toEqual(p);
    expect(await store.projects.findProjectById(p.id)).toEqual(p);
    expect(await store.projects.findProjectByName("nope")).toBeNull();
    await store.projects.updateProjectSettings(p.id, { providerPriority: ["NAMESPACE_B"] });
    expect((await store.projects.findProjectById(p.id))?.settings).toEqual({
      providerPriority: ["NAMESPACE_B"],
    });
    await expect(store.projects.createProject({ name: "demo" })).rejects.toThrow();

    const k = await store.projects.insertApiKey({
      projectId: p.id,
      name: "ci",
      prefix: "on_12345678",
      hash: "h1",
    });
    expect(await store.projects.findApiKeyByHash("h1")).toEqual(k);
    expect(await store.projects.findApiKeyByHash("h2")).toBeNull();
    await store.projects.touchApiKeys(new Map([[k.id, 42]]));
    expect((await store.projects.listApiKeys(p.id))[0].lastUsedAt).toBe(42);
    await store.projects.revokeApiKey(k.id, 99);
    expect(await store.projects.findApiKeyByHash("h1")).toBeNull();
    expect((await store.projects.listApiKeys(p.id))[0].revokedAt).toBe(99);
  });
});
