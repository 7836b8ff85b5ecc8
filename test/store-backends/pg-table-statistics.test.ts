import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/store/crawler-log.port.js";
import { findJournalByTokens } from "../../src/store/kysely/journal.queries.js";
import { MIN_CHANGES } from "../../src/store/postgres/pg-table-statistics.js";
import { createPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createTestDatabase } from "../helpers/pg.js";
import { captureQueries, queryPlan } from "../helpers/query-plans.js";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";

/*
 * A backfill into a fresh PostgreSQL store: the planner's statistics of the crawled tables are
 * taken again by the store as the tables double (pg-table-statistics.ts), so that the crawler's
 * read of a part's tokens uses the token index by its key, not a scan of the source's whole range
 * planned for an empty table (measured: 8.8 million heap pages read over a million events).
 */

const token = (i: number) => `0x${i.toString(16).padStart(64, "0")}`;
function entry(i: number): JournalEntry {
  return {
    sourceId: "uns-polygon",
    chainId: 137,
    blockNumber: Math.floor(i / 1000),
    blockHash: `0x${"ab".repeat(32)}`,
    logIndex: i % 1000,
    txHash: `0x${"cd".repeat(32)}`,
    contract: `0x${"11".repeat(20)}`,
    tokenId: token(i),
    event: JSON.stringify({ type: "transfer", tokenId: token(i) }),
    blockTime: 1,
  };
}

describe("PostgreSQL: the crawled tables' statistics kept up with a backfill", () => {
  let store: PostgresStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    store = createPostgresStore(db.url);
    await store.migrate();
    // Autovacuum's own analysis (once a minute) would move the counters under the test.
    await sql`alter table journal set (autovacuum_enabled = false)`.execute(store.db);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  const lastAnalyzed = async (table: string) =>
    (
      await sql<{ at: Date | null }>`select last_analyze as at from pg_stat_user_tables
        where relname = ${table}`.execute(store.db)
    ).rows[0]?.at ?? null;

  /** A range's write as the crawler's (journal and map in one transaction), `from` to `to`. */
  const write = (from: number, to: number) =>
    store.transaction(async (tx) => {
      await tx.crawlerLog.appendJournal(Array.from({ length: to - from }, (_, k) => entry(from + k)));
      await tx.domainMap.upsertDomains([testDomain({ tokenId: tokenIdOf(from + 1) })]);
    });

  const times = (table: string) => store.statistics.analyzed.filter((t) => t === table).length;
  /** Checks until `table` is analyzed once more (the server's counters arrive within ~1 s). */
  async function analyzedSoon(table: string): Promise<boolean> {
    const before = times(table);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      await store.statistics.checkNow();
      if (times(table) > before) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  it("leaves a table below the threshold alone", async () => {
    await write(0, MIN_CHANGES - 100);
    await new Promise((r) => setTimeout(r, 1_200));
    await store.statistics.checkNow();
    expect(store.statistics.analyzed).not.toContain("journal");
    expect(await lastAnalyzed("journal")).toBeNull();
  });

  it("analyzes the journal once it has doubled, and the token read then uses the token index's key", async () => {
    await write(MIN_CHANGES - 100, 30_000);
    expect(await analyzedSoon("journal")).toBe(true);
    expect(await lastAnalyzed("journal")).not.toBeNull();
    const { db: watched, seen } = captureQueries(store.db);
    await findJournalByTokens(
      watched,
      "uns-polygon",
      Array.from({ length: 500 }, (_, i) => token(40_000 + i)),
    );
    expect(seen).toHaveLength(1);
    const plan = await queryPlan(store.db, "postgres", seen[0].sql, seen[0].parameters);
    expect(plan).toMatch(/Index Cond: .*"right"\(token_id, 13\) = ANY/);
  });

  it("does not analyze again until the table has doubled once more", async () => {
    const before = times("journal");
    await write(30_000, 31_000);
    // Past the server's counter flush (at most a second), so that the check sees the write.
    await new Promise((r) => setTimeout(r, 1_200));
    await store.statistics.checkNow();
    expect(times("journal")).toBe(before);
    await write(31_000, 62_000);
    expect(await analyzedSoon("journal")).toBe(true);
    expect(times("journal")).toBe(before + 1);
  });
});
