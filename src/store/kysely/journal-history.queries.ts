import { sql } from "kysely";
import type { JournalBound, JournalStart } from "../crawler-log.port.js";
import { isPostgres } from "./crawler-log.queries.js";
import type { Db } from "./rows.js";

/* The journal's reads for time travel (crawler-log.port.ts), shared by both backends; a token's entries up to a point are journal.queries.ts `findJournalByTokens` with a bound. */

export async function findJournalKeysMentioning(
  db: Db,
  sourceId: string,
  address: string,
  upTo: JournalBound,
): Promise<string[]> {
  // The events' JSON holds addresses in lower case (provider.ts); a plain substring search over the
  // source's entries (no index can serve it: see docs/api.md, time travel).
  const found = isPostgres(db)
    ? sql<boolean>`strpos(event, ${address}) > 0`
    : sql<boolean>`instr(event, ${address}) > 0`;
  let q = db
    .selectFrom("journal")
    .select("token_id")
    .distinct()
    .where("source_id", "=", sourceId)
    .where("token_id", "is not", null)
    .where(found);
  q = "block" in upTo ? q.where("block_number", "<=", upTo.block) : q.where("block_time", "<=", upTo.time);
  return (await q.execute()).map((r) => r.token_id as string);
}

export async function findJournalStart(db: Db, sourceId: string): Promise<JournalStart | null> {
  const r = await db
    .selectFrom("journal")
    .select(["block_number", "block_time"])
    .where("source_id", "=", sourceId)
    .orderBy("block_number")
    .limit(1)
    .executeTakeFirst();
  if (!r) return null;
  return {
    blockNumber: Number(r.block_number),
    blockTime: r.block_time === null ? null : Number(r.block_time),
  };
}

export async function findJournalTimeAt(db: Db, sourceId: string, block: number): Promise<number | null> {
  const r = await db
    .selectFrom("journal")
    .select("block_time")
    .where("source_id", "=", sourceId)
    .where("block_number", "<=", block)
    .where("block_time", "is not", null)
    .orderBy("block_number", "desc")
    .limit(1)
    .executeTakeFirst();
  return r?.block_time == null ? null : Number(r.block_time);
}
