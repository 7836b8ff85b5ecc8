import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainRecord, DomainWrite } from "../../domain/types.js";
import type { JournalEntry } from "../crawler-log.port.js";
import type { Store } from "../store.js";
import { writesInBulk } from "./sqlite-bulk-writes.js";
import { createSqliteStore, type SqliteStore } from "./sqlite-store.js";

const ALICE = "0x00000000000000000000000000000000000a11ce";
const BOB = "0x0000000000000000000000000000000000000b0b";
const token = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

function domain(n: number, over: Partial<DomainWrite> = {}): DomainWrite {
  return {
    provider: "NAMESPACE_A",
    network: "POLYGON",
    tokenId: token(n),
    name: `name${n}.wallet`,
    sld: `name${n}`,
    tld: "wallet",
    owner: ALICE,
    contractAddress: "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
    resolver: null,
    registeredAt: 1_700_000_000_000 + n,
    registeredBlock: 10 + n,
    expiresAt: null,
    lastUpdateBlock: 10 + n,
    lastUpdateAt: 1_700_000_000_000 + n,
    baseScore: 50,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
    ...over,
  };
}

function entry(
  block: number,
  logIndex: number,
  tokenN: number,
  over: Partial<JournalEntry> = {},
): JournalEntry {
  return {
    sourceId: "fns-polygon",
    chainId: 137,
    blockNumber: block,
    blockHash: `0xb${block}`,
    logIndex,
    txHash: `0xt${block}`,
    contract: "0xc",
    tokenId: token(tokenN),
    event: JSON.stringify([{ type: "transfer", n: tokenN }]),
    blockTime: block % 2 === 0 ? 1_700_000_000 + block : null,
    ...over,
  };
}

const record = (key: string, value: string): DomainRecord => ({
  key,
  value,
  nativeKey: `native.${key}`,
  nativeValue: value,
});

/**
 * Everything the crawler's writes leave in the tables, ids included: the bulk path must leave
 * exactly what the Kysely path leaves.
 */
function dump(store: SqliteStore): unknown {
  const db = store.raw;
  return {
    domains: db.prepare("select * from domains order by id").all(),
    records: db.prepare("select * from records order by domain_id, key").all(),
    journal: db.prepare("select * from journal order by id").all(),
  };
}

/**
 * The same script of writes, run once inside a transaction (bulk statements) and once outside
 * (the Kysely path, which SqliteStore keeps outside transactions), returning what each call gave.
 */
async function script(store: Store): Promise<unknown[]> {
  const out: unknown[] = [];
  out.push(
    await store.crawlerLog.appendJournal([entry(1, 0, 1), entry(1, 1, 2), entry(2, 0, 1), entry(2, 1, 3)]),
  );
  // Re-applied entries are skipped and not counted; a token-less entry is its own position.
  out.push(
    await store.crawlerLog.appendJournal([entry(1, 0, 1), entry(3, 0, 2), entry(3, 1, 1, { tokenId: null })]),
  );
  // Unknown tokens, duplicates, and more tokens than one lookup chunk holds.
  const many = Array.from({ length: 1_203 }, (_, i) => token(1_000 + i));
  out.push(
    await store.crawlerLog.findJournalByTokens("fns-polygon", [
      token(3),
      token(9),
      token(1),
      token(1),
      ...many,
      token(2),
    ]),
  );
  out.push(await store.crawlerLog.findJournalByTokens("other-source", [token(1)]));
  out.push(await store.crawlerLog.findJournalByTokens("fns-polygon", []));

  // New domains, a token written twice in one call (the last write wins), a NUL in a name.
  out.push(
    await store.domainMap.upsertDomains([
      domain(1),
      domain(2),
      domain(1, { owner: BOB, tags: ["x"] }),
      domain(3, { name: "a\u0000b.wallet", spam: true }),
    ]),
  );
  // Existing domains keep their ids and take the new values; another network is another domain.
  out.push(
    await store.domainMap.upsertDomains([
      domain(2, { resolver: "0xr", expiresAt: 5, kyc: true }),
      domain(4),
      domain(2, { network: "BSC" }),
    ]),
  );
  out.push(
    Object.fromEntries(
      await store.domainMap.findDomainIdsByTokens("POLYGON", "NAMESPACE_A", [
        token(4),
        token(99),
        token(1),
        ...many,
      ]),
    ),
  );
  out.push(
    Object.fromEntries(
      await store.domainMap.findDomainIdsByTokens("BSC", "NAMESPACE_A", [token(2), token(1)]),
    ),
  );

  const [id1, id2, id3] = (await store.domainMap.upsertDomains([domain(1), domain(2), domain(3)])).map(
    Number,
  );
  await store.domainMap.replaceRecordsMany([
    { domainId: id1, records: [record("a", "1"), record("b", "2"), record("a", "3")] },
    { domainId: id2, records: [record("c", "4")] },
    // Listed twice: the first set wins.
    { domainId: id1, records: [record("z", "9")] },
  ]);
  await store.domainMap.replaceRecordsMany([
    { domainId: id2, records: [] },
    { domainId: id3, records: [record("d", "5")] },
  ]);
  out.push(
    await store.domainMap.findRecords(id1),
    await store.domainMap.findRecords(id2),
    await store.domainMap.findRecords(id3),
  );
  // A domain new in this transaction whose records another write gave first: replaced, not added to.
  const [id5] = await store.domainMap.upsertDomains([domain(5)]);
  await store.domainMap.replaceRecords(id5, [record("e", "6")]);
  await store.domainMap.replaceRecordsMany([{ domainId: id5, records: [record("f", "7")] }]);
  out.push(await store.domainMap.findRecords(id5));
  return out;
}

describe("SQLite bulk writes inside a transaction", () => {
  let dir: string;
  let bulk: SqliteStore;
  let kysely: SqliteStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-bulk-"));
    bulk = createSqliteStore(join(dir, "bulk.db"));
    kysely = createSqliteStore(join(dir, "kysely.db"));
    await bulk.migrate();
    await kysely.migrate();
  });
  afterEach(async () => {
    await bulk.close();
    await kysely.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("return and leave exactly what the Kysely path returns and leaves", async () => {
    const viaBulk = await bulk.transaction((tx) => {
      expect(writesInBulk(tx)).toBe(true);
      return script(tx);
    });
    const viaKysely = await script(kysely);
    expect(viaBulk).toEqual(viaKysely);
    expect(dump(bulk)).toEqual(dump(kysely));
    // The script does reach the interesting cases.
    expect(viaBulk[0]).toBe(4);
    expect(viaBulk[1]).toBe(2);
    expect((viaBulk.at(-1) as DomainRecord[]).map((r) => r.key)).toEqual(["f"]);
    // Grouped by token within each chunk of 500 asked tokens (token 2 is in the third chunk).
    expect((viaBulk[2] as JournalEntry[]).map((e) => [e.tokenId, e.blockNumber, e.logIndex])).toEqual([
      [token(1), 1, 0],
      [token(1), 2, 0],
      [token(3), 2, 1],
      [token(2), 1, 1],
      [token(2), 3, 0],
    ]);
  });

  it("run inside the transaction: a failure rolls them back with everything else", async () => {
    await expect(
      bulk.transaction(async (tx) => {
        await tx.crawlerLog.appendJournal([entry(1, 0, 1)]);
        const [id] = await tx.domainMap.upsertDomains([domain(1)]);
        await tx.domainMap.replaceRecordsMany([{ domainId: id, records: [record("a", "1")] }]);
        // Visible to the transaction itself, through Kysely too.
        expect(await tx.domainMap.findDomainByToken("POLYGON", "NAMESPACE_A", token(1))).not.toBeNull();
        expect(await tx.crawlerLog.findJournalByTokens("fns-polygon", [token(1)])).toHaveLength(1);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(dump(bulk)).toEqual({ domains: [], records: [], journal: [] });
    expect(await bulk.domainMap.countDomains()).toBe(0);
  });

  it("give the Kysely path's ids after the connection lost their staging table (a rollback, a change of temp_store)", async () => {
    // The domains' upsert stages its rows in a TEMP table of the connection (sqlite-domain-stage.ts):
    // a rolled-back transaction that created it, or a change of temp_store, takes it away.
    await expect(
      bulk.transaction(async (tx) => {
        await tx.domainMap.upsertDomains([domain(7), domain(8)]);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const viaBulk = [await bulk.transaction((tx) => tx.domainMap.upsertDomains([domain(1), domain(2)]))];
    bulk.raw.pragma("temp_store = DEFAULT");
    viaBulk.push(
      await bulk.transaction((tx) => tx.domainMap.upsertDomains([domain(2), domain(3), domain(4)])),
    );
    const viaKysely = [
      await kysely.domainMap.upsertDomains([domain(1), domain(2)]),
      await kysely.domainMap.upsertDomains([domain(2), domain(3), domain(4)]),
    ];
    expect(viaBulk).toEqual(viaKysely);
    expect(dump(bulk)).toEqual(dump(kysely));
  });

  it("are seen by the store's reads once committed", async () => {
    await bulk.transaction(async (tx) => {
      await tx.domainMap.upsertDomains([domain(1)]);
    });
    const [d] = await bulk.domainMap.findDomainsByName(["name1.wallet"], {});
    expect(d?.tokenId).toBe(token(1));
  });
});
