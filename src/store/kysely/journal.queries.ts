import type { JournalBound, JournalEntry } from "../crawler-log.port.js";
import { CompiledQuery, sql } from "kysely";
import { isPostgres } from "./crawler-log.queries.js";
import { jsonColumn, type PgColumnType, pgRowsFromText } from "./pg-json-columns.js";
import { type Db, MAX_IN, pagesById, safeText, toJournal } from "./rows.js";

/*
 * The journal's writes and reads (crawler-log.port.ts), shared by both backends: the crawler's
 * entries, a token's events for its replay, the rollback's, and the snapshot's walk. Time travel's
 * own reads are journal-history.queries.ts.
 */

/**
 * The key of the journal's token index (`journal_token_block`, migration 0028): the last
 * `TOKEN_KEY_CHARS` characters of the token id, written as each dialect's expression. A read by
 * token names this expression (the index serves only a query that names it) and the whole id (two
 * tokens may share a suffix).
 */
export const TOKEN_KEY_CHARS = 13;
export const JOURNAL_TOKEN_KEY = {
  sqlite: `substr(token_id, -${TOKEN_KEY_CHARS})`,
  postgres: `right(token_id, ${TOKEN_KEY_CHARS})`,
} as const;

/** A token id's key in `journal_token_block`: what `JOURNAL_TOKEN_KEY` computes from it. */
export function journalTokenKey(tokenId: string): string {
  return tokenId.slice(-TOKEN_KEY_CHARS);
}

/**
 * SQLite: a token of a JSON array, as the prepared statements of sqlite-bulk-writes.ts and
 * sqlite-read-statements.ts ask it: the array bound twice, for the key and for the whole id
 * (better-sqlite3 binds no numbered parameter).
 */
export const SQLITE_TOKEN_IN_JSON = `${JOURNAL_TOKEN_KEY.sqlite} in (select substr(value, -${TOKEN_KEY_CHARS}) from json_each(?))
    and token_id in (select value from json_each(?))`;

function tokenKeyOf(db: Db) {
  return sql.raw<string>(isPostgres(db) ? JOURNAL_TOKEN_KEY.postgres : JOURNAL_TOKEN_KEY.sqlite);
}
/** The journal's unique key (`journal_source_position`, migration 0029): every insert's conflict target. */
export const JOURNAL_KEY = ["source_id", "block_number", "log_index", "token_id"] as const;
const ON_CONFLICT = `on conflict (${JOURNAL_KEY.join(", ")}) do nothing`;

/**
 * SQLite: the journal's insert of `rows` rows, columns in JournalEntry order (`runAppendJournal`);
 * an entry already journaled is skipped. The crawler's prepared writes and the snapshot import's.
 */
export function sqliteJournalInsert(rows: number): string {
  return `insert into journal (source_id, chain_id, block_number, block_hash, log_index, tx_hash, contract, token_id, event, block_time)
       values ${Array(rows).fill("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}
       ${ON_CONFLICT}`;
}

/** A journal entry as the table's row. */
export function journalRow(e: JournalEntry) {
  return {
    source_id: e.sourceId,
    chain_id: e.chainId,
    block_number: e.blockNumber,
    block_hash: e.blockHash,
    log_index: e.logIndex,
    tx_hash: e.txHash,
    contract: e.contract,
    token_id: e.tokenId,
    event: e.event,
    block_time: e.blockTime ?? null,
  };
}

export async function appendJournal(db: Db, entries: JournalEntry[]): Promise<number> {
  if (isPostgres(db)) return appendJournalPostgres(db, entries);
  let inserted = 0;
  for (let i = 0; i < entries.length; i += 200) {
    const rows = entries.slice(i, i + 200).map(journalRow);
    const res = await db
      .insertInto("journal")
      .values(rows)
      .onConflict((oc) => oc.columns([...JOURNAL_KEY]).doNothing())
      .executeTakeFirst();
    inserted += Number(res.numInsertedOrUpdatedRows ?? 0);
  }
  return inserted;
}

/** Journal rows per PostgreSQL statement: ten arrays of this many values. */
const PG_JOURNAL_CHUNK = 5_000;

/**
 * PostgreSQL: one statement per 5,000 entries, each column passed as one JSON array parameter and
 * turned back into rows (pg-json-columns.ts). The same rows and conflict rule as the multi-row
 * insert, without a 2,000-parameter query built, compiled and sent per 200 rows (~10x cheaper a row
 * here).
 */
async function appendJournalPostgres(db: Db, entries: JournalEntry[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < entries.length; i += PG_JOURNAL_CHUNK) {
    const chunk = entries.slice(i, i + PG_JOURNAL_CHUNK);
    const res = await db.executeQuery(CompiledQuery.raw(PG_JOURNAL_INSERT, journalColumns(chunk)));
    inserted += Number(res.numAffectedRows ?? 0);
  }
  return inserted;
}

/**
 * PostgreSQL: the journal's insert from one JSON array parameter per column (`journalColumns`),
 * the crawler's and the snapshot import's; an entry already journaled is skipped.
 */
/** The journal's columns in JournalEntry order, with their PostgreSQL types. */
const PG_JOURNAL_COLUMNS: ReadonlyArray<readonly [string, PgColumnType]> = [
  ["source_id", "text"],
  ["chain_id", "bigint"],
  ["block_number", "bigint"],
  ["block_hash", "text"],
  ["log_index", "integer"],
  ["tx_hash", "text"],
  ["contract", "text"],
  ["token_id", "text"],
  ["event", "text"],
  ["block_time", "bigint"],
];

export const PG_JOURNAL_INSERT = `insert into journal (${PG_JOURNAL_COLUMNS.map(([name]) => name).join(", ")})
  ${pgRowsFromText(PG_JOURNAL_COLUMNS)}
  ${ON_CONFLICT}`;

/** The parameters of `PG_JOURNAL_INSERT`: one JSON array per column (text safe for PostgreSQL). */
export function journalColumns(entries: readonly JournalEntry[]): string[] {
  const cols: unknown[][] = Array.from({ length: 10 }, () => []);
  for (const e of entries) {
    cols[0].push(e.sourceId);
    cols[1].push(e.chainId);
    cols[2].push(e.blockNumber);
    cols[3].push(e.blockHash);
    cols[4].push(e.logIndex);
    cols[5].push(e.txHash);
    cols[6].push(e.contract);
    cols[7].push(e.tokenId === null ? null : safeText(e.tokenId));
    cols[8].push(safeText(e.event));
    cols[9].push(e.blockTime ?? null);
  }
  return cols.map(jsonColumn);
}

export async function findJournalByToken(db: Db, sourceId: string, tokenId: string): Promise<JournalEntry[]> {
  const rows = await db
    .selectFrom("journal")
    .selectAll()
    .where("source_id", "=", sourceId)
    .where(tokenKeyOf(db), "=", journalTokenKey(tokenId))
    .where("token_id", "=", tokenId)
    .orderBy("block_number")
    .orderBy("log_index")
    .execute();
  return rows.map(toJournal);
}

export async function findJournalAfter(
  db: Db,
  sourceId: string,
  blockNumber: number,
): Promise<JournalEntry[]> {
  const rows = await db
    .selectFrom("journal")
    .selectAll()
    .where("source_id", "=", sourceId)
    .where("block_number", ">", blockNumber)
    .orderBy("block_number")
    .orderBy("log_index")
    .execute();
  return rows.map(toJournal);
}

export async function deleteJournalAfter(db: Db, sourceId: string, blockNumber: number): Promise<number> {
  const res = await db
    .deleteFrom("journal")
    .where("source_id", "=", sourceId)
    .where("block_number", ">", blockNumber)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** `upTo`: only the entries up to a block or a block time (time travel). */
export async function findJournalByTokens(
  db: Db,
  sourceId: string,
  tokenIds: string[],
  upTo?: JournalBound,
): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  const postgres = isPostgres(db);
  for (let i = 0; i < tokenIds.length; i += MAX_IN) {
    const chunk = tokenIds.slice(i, i + MAX_IN);
    const keys = [...new Set(chunk.map(journalTokenKey))];
    let q = db
      .selectFrom("journal")
      .selectAll()
      .where("source_id", "=", sourceId)
      // PostgreSQL: the chunk as one array parameter rather than 500 (the same rows).
      .where((eb) =>
        postgres
          ? eb(tokenKeyOf(db), "=", sql<string>`any(${keys}::text[])`)
          : eb(tokenKeyOf(db), "in", keys),
      )
      .where((eb) =>
        postgres ? eb("token_id", "=", sql<string>`any(${chunk}::text[])`) : eb("token_id", "in", chunk),
      );
    if (upTo !== undefined)
      q =
        "block" in upTo ? q.where("block_number", "<=", upTo.block) : q.where("block_time", "<=", upTo.time);
    const rows = await q.orderBy("token_id").orderBy("block_number").orderBy("log_index").execute();
    for (const r of rows) out.push(toJournal(r));
  }
  return out;
}

export async function findJournalTokensAfter(
  db: Db,
  sourceId: string,
  blockNumber: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom("journal")
    .select("token_id")
    .distinct()
    .where("source_id", "=", sourceId)
    .where("block_number", ">", blockNumber)
    .where("token_id", "is not", null)
    .execute();
  return rows.map((r) => r.token_id as string);
}

export async function* iterateJournal(db: Db, pageSize = 5000): AsyncIterable<JournalEntry[]> {
  const pages = pagesById(
    (after, limit) =>
      db.selectFrom("journal").selectAll().where("id", ">", after).orderBy("id").limit(limit).execute(),
    pageSize,
  );
  for await (const rows of pages) yield rows.map(toJournal);
}
