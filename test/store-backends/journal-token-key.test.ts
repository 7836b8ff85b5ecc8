import { createHash } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/store/crawler-log.port.js";
import {
  findJournalByToken,
  findJournalByTokens,
  journalTokenKey,
} from "../../src/store/kysely/journal.queries.js";
import { SQLITE_JOURNAL_BY_TOKENS } from "../../src/store/sqlite/sqlite-bulk-writes.js";
import { JOURNAL_READS } from "../../src/store/sqlite/sqlite-read-statements.js";
import type { Store } from "../../src/store/store.js";
import { captureQueries, queryPlan } from "../helpers/query-plans.js";
import { indexesOf, type KyselyBacked } from "../helpers/raw-db.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

/*
 * The journal's token index keys a token by the last 13 characters of its id (migration 0028).
 * Tokens that share those characters must still be told apart by every read, and every read by
 * token must be served by the index (a read that names the whole id alone scans the source's
 * journal: at mainnet size, every crawled range would).
 */

const SUFFIX = "0123456789abc";
// Three tokens, two of them with the same last 13 characters (as sequential ids 16^13 apart).
const A = `0x${"1".padStart(51, "0")}${SUFFIX}`;
const B = `0x${"2".padStart(51, "0")}${SUFFIX}`;
const C = `0x${"3".padStart(64, "0")}`;

function entry(token: string, block: number, logIndex: number): JournalEntry {
  return {
    sourceId: "fns-polygon",
    chainId: 137,
    blockNumber: block,
    blockHash: `0x${block.toString(16).padStart(64, "b")}`,
    logIndex,
    txHash: `0x${(block * 10 + logIndex).toString(16).padStart(64, "c")}`,
    contract: "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
    tokenId: token,
    event: JSON.stringify({ type: "transfer", tokenId: token }),
    blockTime: 1000 + block,
  };
}

// By token id, C (…0003) sorts before A (…01…) and B (…02…): reads by several tokens group them so.
const ENTRIES = [entry(A, 5, 0), entry(B, 5, 1), entry(C, 6, 0), entry(B, 7, 0), entry(A, 9, 0)];
const at = (list: JournalEntry[]) =>
  list.map((e) => `${e.tokenId === A ? "A" : e.tokenId === B ? "B" : "C"}@${e.blockNumber}.${e.logIndex}`);

describe.each(STORE_BACKENDS)("the journal's token key ($name)", ({ name, open }) => {
  let store: Store;
  let db: KyselyBacked["db"];
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ store, cleanup } = await open());
    db = (store as unknown as KyselyBacked).db;
    await store.crawlerLog.appendJournal(ENTRIES);
  }, 60_000);
  afterAll(async () => {
    await cleanup?.();
  });

  it("has the two test tokens share their key", () => {
    expect(journalTokenKey(A)).toBe(SUFFIX);
    expect(journalTokenKey(B)).toBe(SUFFIX);
    expect(journalTokenKey("0x1f")).toBe("0x1f");
  });

  it("tells apart tokens that share the key, in every read by token", async () => {
    expect(at(await store.crawlerLog.findJournalByToken("fns-polygon", A))).toEqual(["A@5.0", "A@9.0"]);
    expect(at(await store.crawlerLog.findJournalByTokens("fns-polygon", [B]))).toEqual(["B@5.1", "B@7.0"]);
    expect(at(await store.crawlerLog.findJournalByTokens("fns-polygon", [A, C]))).toEqual([
      "C@6.0",
      "A@5.0",
      "A@9.0",
    ]);
    // Inside a transaction (SQLite: the crawler's prepared statements, not the Kysely path).
    const inTx = await store.transaction((tx) => tx.crawlerLog.findJournalByTokens("fns-polygon", [A, C]));
    expect(at(inTx)).toEqual(["C@6.0", "A@5.0", "A@9.0"]);
    expect(
      at(await store.transaction((tx) => tx.crawlerLog.findJournalByTokens("fns-polygon", [B]))),
    ).toEqual(["B@5.1", "B@7.0"]);
    // Time travel: one token (its own statement on SQLite), several, by block and by time.
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [A], { block: 8 }))).toEqual(["A@5.0"]);
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [B], { time: 1007 }))).toEqual([
      "B@5.1",
      "B@7.0",
    ]);
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [A, C], { block: 100 }))).toEqual([
      "C@6.0",
      "A@5.0",
      "A@9.0",
    ]);
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [B, C], { time: 1006 }))).toEqual([
      "C@6.0",
      "B@5.1",
    ]);
    expect(at(await store.crawlerLog.findJournalByTokens("other-source", [A]))).toEqual([]);
  });

  const plan = (statement: string, parameters: readonly unknown[]) =>
    queryPlan(db, name, statement, parameters);

  it("keeps the key in journal_token_block", async () => {
    const definition = (await indexesOf(db, name, "journal")).find(
      (i) => i.name === "journal_token_block",
    )?.sql;
    expect(definition).toMatch(
      name === "sqlite"
        ? /\(source_id, substr\(token_id, -13\), block_number, log_index\)/
        : /\(source_id, "right"\(token_id, 13\), block_number, log_index\)/,
    );
  });

  it("finds a token's entries through journal_token_block, never by a scan", async () => {
    // A journal of some size, its statistics taken (autovacuum's work on a live store): on five
    // rows PostgreSQL rightly prefers reading the source's whole range of the index.
    const filler = Array.from({ length: 3000 }, (_, i) =>
      entry(`0x${createHash("sha256").update(String(i)).digest("hex")}`, 100 + Math.floor(i / 10), i % 10),
    );
    await store.crawlerLog.appendJournal(filler);
    await sql`analyze journal`.execute(db);
    const { db: watched, seen } = captureQueries(db);
    await findJournalByToken(watched, "fns-polygon", A);
    await findJournalByTokens(watched, "fns-polygon", [A, C]);
    await findJournalByTokens(watched, "fns-polygon", [A], { block: 9 });
    const statements = [...seen];
    if (name === "sqlite")
      for (const s of [SQLITE_JOURNAL_BY_TOKENS, ...Object.values(JOURNAL_READS)])
        statements.push({ sql: s, parameters: Array(s.split("?").length - 1).fill(null) });
    expect(statements.length).toBeGreaterThanOrEqual(3);
    for (const s of statements) {
      const p = await plan(s.sql, s.parameters);
      if (name === "sqlite") {
        expect(p, s.sql).toMatch(
          /SEARCH journal USING INDEX journal_token_block \(source_id=\? AND <expr>=\?[ )]/,
        );
        expect(p, s.sql).not.toMatch(/SCAN journal/);
      } else {
        expect(p, s.sql).toMatch(/(Index Scan using|Bitmap Index Scan on) journal_token_block/);
        expect(p, s.sql).toMatch(/Index Cond: .*"right"\(token_id, 13\) = /);
        expect(p, s.sql).not.toMatch(/Seq Scan/);
      }
    }
  });
});
