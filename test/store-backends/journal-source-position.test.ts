import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/store/crawler-log.port.js";
import {
  deleteJournalAfter,
  findJournalAfter,
  findJournalTokensAfter,
  journalRow,
} from "../../src/store/kysely/journal.queries.js";
import type { Store } from "../../src/store/store.js";
import { captureQueries, queryPlan } from "../helpers/query-plans.js";
import { indexesOf, type KyselyBacked } from "../helpers/raw-db.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

/*
 * The journal is unique on (source, block, log index, token) and the rollback reads that index's
 * first two columns (migration 0029): no index keyed by a block hash, an entry applied twice is
 * journaled once, each source keeps its own entries, and an upgraded store keeps one entry per
 * position.
 */

const TOKEN = `0x${"7".repeat(64)}`;
const OTHER = `0x${"8".repeat(64)}`;

function entry(
  block: number,
  logIndex: number,
  token: string | null = TOKEN,
  { source = "uns-polygon", fork = "a" }: { source?: string; fork?: string } = {},
): JournalEntry {
  return {
    sourceId: source,
    chainId: 137,
    blockNumber: block,
    blockHash: `0x${fork}${block.toString(16).padStart(63, "b")}`,
    logIndex,
    txHash: `0x${(block * 10 + logIndex).toString(16).padStart(64, "c")}`,
    contract: "0xa9a6a3626993d487d2dbda3173cf58ca1a9d9e9f",
    tokenId: token,
    event: JSON.stringify({ type: "transfer", block, fork }),
    blockTime: 1000 + block,
  };
}

const where = (list: JournalEntry[]) =>
  list.map((e) => `${e.sourceId}@${e.blockNumber}.${e.logIndex}:${JSON.parse(e.event).fork}`);

describe.each(STORE_BACKENDS)("the journal's source position ($name)", ({ name, open }) => {
  let store: Store;
  let db: KyselyBacked["db"];
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ store, cleanup } = await open());
    db = (store as unknown as KyselyBacked).db;
  }, 60_000);
  afterAll(async () => {
    await cleanup?.();
  });

  it("keeps two indexes besides the key: the source position (unique) and the token's", async () => {
    const indexes = (await indexesOf(db, name, "journal")).filter((i) => i.sql !== null);
    const named = indexes.map((i) => i.name).filter((n) => !/pkey|autoindex/.test(n));
    expect(named.sort()).toEqual(["journal_source_position", "journal_token_block"]);
    const position = indexes.find((i) => i.name === "journal_source_position")?.sql ?? "";
    expect(position).toMatch(/create unique index/i);
    expect(position).toMatch(/\(source_id, block_number, log_index, token_id\)/);
    for (const i of indexes) expect(i.sql).not.toMatch(/block_hash/);
  });

  it("journals an entry applied again once, in a transaction or not", async () => {
    const first = [entry(10, 0), entry(10, 1, OTHER), entry(11, 0, null)];
    expect(await store.crawlerLog.appendJournal(first)).toBe(3);
    expect(await store.crawlerLog.appendJournal([entry(10, 0), entry(10, 1, OTHER)])).toBe(0);
    expect(await store.transaction((tx) => tx.crawlerLog.appendJournal([entry(10, 0), entry(12, 0)]))).toBe(
      1,
    );
    expect(where(await store.crawlerLog.findJournalByToken("uns-polygon", TOKEN))).toEqual([
      "uns-polygon@10.0:a",
      "uns-polygon@12.0:a",
    ]);
  });

  it("keeps each source's own entry of one log", async () => {
    // The same log (block hash, log index, token) crawled by a second source of the same chain.
    expect(await store.crawlerLog.appendJournal([entry(10, 0, TOKEN, { source: "uns-polygon-2" })])).toBe(1);
    expect(where(await store.crawlerLog.findJournalByToken("uns-polygon-2", TOKEN))).toEqual([
      "uns-polygon-2@10.0:a",
    ]);
    expect(where(await store.crawlerLog.findJournalByToken("uns-polygon", TOKEN))).toHaveLength(2);
  });

  it("lets a rollback delete a fork and journal the new one at the same positions", async () => {
    expect(await store.crawlerLog.deleteJournalAfter("uns-polygon", 11)).toBe(1);
    expect(await store.crawlerLog.appendJournal([entry(12, 0, TOKEN, { fork: "c" })])).toBe(1);
    expect(where(await store.crawlerLog.findJournalAfter("uns-polygon", 11))).toEqual(["uns-polygon@12.0:c"]);
  });

  it("serves the rollback's reads by source and block from journal_source_position", async () => {
    const filler = Array.from({ length: 3000 }, (_, i) =>
      entry(100 + Math.floor(i / 10), i % 10, `0x${i.toString(16).padStart(64, "0")}`),
    );
    await store.crawlerLog.appendJournal(filler);
    await sql`analyze journal`.execute(db);
    // The statements the store's rollback sends, captured as they are (parameters included).
    const { db: watched, seen } = captureQueries(db);
    expect(await findJournalTokensAfter(watched, "uns-polygon", 390)).toHaveLength(90);
    expect(await findJournalAfter(watched, "uns-polygon", 390)).toHaveLength(90);
    const statements = [...seen];
    // The delete's plan is asked, not run: its rows are deleted once, below.
    const deleted = captureQueries(db);
    await deleteJournalAfter(deleted.db, "uns-polygon", Number.MAX_SAFE_INTEGER);
    statements.push({ ...deleted.seen[0], parameters: ["uns-polygon", 390] });
    expect(statements).toHaveLength(3);
    for (const s of statements) {
      const p = await queryPlan(db, name, s.sql, s.parameters);
      if (name === "sqlite") {
        expect(p, s.sql).toMatch(
          /SEARCH journal USING (COVERING )?INDEX journal_source_position \(source_id=\? AND block_number>\?\)/,
        );
        expect(p, s.sql).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
      } else {
        expect(p, s.sql).toMatch(
          /Index (Only )?Scan using journal_source_position|Bitmap Index Scan on journal_source_position/,
        );
        expect(p, s.sql).not.toMatch(/Seq Scan/);
      }
    }
    expect(await store.crawlerLog.deleteJournalAfter("uns-polygon", 390)).toBe(90);
  });

  it("keeps the entry journaled last when an upgraded store held two at one position", async () => {
    // The store as 0028 left it: a unique key by block hash, so two forks could share a position
    // (and two sources could not hold one log).
    await store.crawlerLog.deleteJournalAfter("uns-polygon-2", 0);
    await store.crawlerLog.deleteJournalAfter("uns-polygon", 19);
    await sql`drop index journal_source_position`.execute(db);
    await sql`create unique index journal_position_token on journal (chain_id, block_hash, log_index, token_id)`.execute(
      db,
    );
    await sql`create index journal_source_block on journal (source_id, block_number)`.execute(db);
    // Written as rows (the port's insert names the new unique key, which this table lacks).
    const rows = ["d", "e"].flatMap((fork) =>
      [entry(20, 0, TOKEN, { fork }), entry(20, 1, null, { fork })].map(journalRow),
    );
    for (const r of rows) await db.insertInto("journal").values(r).execute();
    expect(where(await store.crawlerLog.findJournalAfter("uns-polygon", 19))).toHaveLength(4);
    await sql`delete from omniname_migrations where name = '0029-journal-source-position'`.execute(db);
    await (store as unknown as KyselyBacked).migrate();
    // Entries without a token are not keyed by the unique index (NULLs differ): both stay.
    expect(where(await store.crawlerLog.findJournalAfter("uns-polygon", 19))).toEqual([
      "uns-polygon@20.0:e",
      "uns-polygon@20.1:d",
      "uns-polygon@20.1:e",
    ]);
    const named = (await indexesOf(db, name, "journal")).map((i) => i.name);
    expect(named).toContain("journal_source_position");
    expect(named).not.toContain("journal_position_token");
    expect(named).not.toContain("journal_source_block");
  });
});
