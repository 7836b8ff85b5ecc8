import type {
  Checkpoint,
  JournalBound,
  JournalEntry,
  RecentBlock,
  SourceLease,
  SourceProgressReport,
} from "../crawler-log.port.js";
import { CompiledQuery, PostgresAdapter, sql } from "kysely";
import { type Db, MAX_IN, pagesById, safeText, toCheckpoint, toJournal } from "./rows.js";

/* The crawler log's queries (crawler-log.port.ts), shared by both backends. */

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

function tokenKeyOf(db: Db) {
  return sql.raw<string>(isPostgres(db) ? JOURNAL_TOKEN_KEY.postgres : JOURNAL_TOKEN_KEY.sqlite);
}

export async function getCheckpoint(db: Db, sourceId: string): Promise<Checkpoint | null> {
  const r = await db
    .selectFrom("checkpoints")
    .selectAll()
    .where("source_id", "=", sourceId)
    .executeTakeFirst();
  return r ? toCheckpoint(r) : null;
}

export async function listCheckpoints(db: Db): Promise<Checkpoint[]> {
  const rows = await db.selectFrom("checkpoints").selectAll().orderBy("source_id").execute();
  return rows.map(toCheckpoint);
}

export async function setCheckpoint(db: Db, c: Checkpoint): Promise<void> {
  const values = {
    source_id: c.sourceId,
    chain_id: c.chainId,
    block_number: c.blockNumber,
    block_hash: c.blockHash,
    updated_at: c.updatedAt,
    state: c.state,
    error: c.error,
  };
  const { source_id, ...update } = values;
  await db
    .insertInto("checkpoints")
    .values(values)
    .onConflict((oc) => oc.column("source_id").doUpdateSet(update))
    .execute();
}

export async function deleteCheckpoint(db: Db, sourceId: string): Promise<void> {
  await db.deleteFrom("checkpoints").where("source_id", "=", sourceId).execute();
}

export async function appendJournal(db: Db, entries: JournalEntry[]): Promise<number> {
  if (isPostgres(db)) return appendJournalPostgres(db, entries);
  let inserted = 0;
  for (let i = 0; i < entries.length; i += 200) {
    const rows = entries.slice(i, i + 200).map((e) => ({
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
    }));
    const res = await db
      .insertInto("journal")
      .values(rows)
      .onConflict((oc) => oc.columns(["chain_id", "block_hash", "log_index", "token_id"]).doNothing())
      .executeTakeFirst();
    inserted += Number(res.numInsertedOrUpdatedRows ?? 0);
  }
  return inserted;
}

/** Journal rows per PostgreSQL statement: ten arrays of this many values. */
const PG_JOURNAL_CHUNK = 5_000;

/**
 * PostgreSQL: one statement per 5,000 entries, each column passed as one array parameter and
 * turned back into rows by `unnest`. The same rows and conflict rule as the multi-row insert, without
 * a 2,000-parameter query built, compiled and sent per 200 rows (~10x cheaper a row here).
 */
async function appendJournalPostgres(db: Db, entries: JournalEntry[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < entries.length; i += PG_JOURNAL_CHUNK) {
    const chunk = entries.slice(i, i + PG_JOURNAL_CHUNK);
    const res = await db.executeQuery(CompiledQuery.raw(PG_JOURNAL_INSERT, journalArrays(chunk)));
    inserted += Number(res.numAffectedRows ?? 0);
  }
  return inserted;
}

/**
 * PostgreSQL: the journal's insert from one array parameter per column (`journalArrays`), the
 * crawler's and the snapshot import's; an entry already journaled is skipped.
 */
export const PG_JOURNAL_INSERT = `insert into journal
    (source_id, chain_id, block_number, block_hash, log_index, tx_hash, contract, token_id, event, block_time)
  select * from unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::integer[], $6::text[],
    $7::text[], $8::text[], $9::text[], $10::bigint[])
  on conflict (chain_id, block_hash, log_index, token_id) do nothing`;

/** The parameters of `PG_JOURNAL_INSERT`: one array per column (text safe for PostgreSQL). */
export function journalArrays(entries: readonly JournalEntry[]): unknown[][] {
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
  return cols;
}

export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
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

export async function putRecentBlocks(db: Db, sourceId: string, list: RecentBlock[]): Promise<void> {
  // One statement may not touch a row twice: the last entry of a block number wins.
  const blocks = [...new Map(list.map((b) => [b.blockNumber, b])).values()];
  for (let i = 0; i < blocks.length; i += 500) {
    await db
      .insertInto("crawler_blocks")
      .values(
        blocks.slice(i, i + 500).map((b) => ({
          source_id: sourceId,
          block_number: b.blockNumber,
          block_hash: b.blockHash,
          parent_hash: b.parentHash,
        })),
      )
      .onConflict((oc) =>
        oc.columns(["source_id", "block_number"]).doUpdateSet((eb) => ({
          block_hash: eb.ref("excluded.block_hash"),
          parent_hash: eb.ref("excluded.parent_hash"),
        })),
      )
      .execute();
  }
}

export async function findRecentBlocks(db: Db, sourceId: string, fromBlock: number): Promise<RecentBlock[]> {
  const rows = await db
    .selectFrom("crawler_blocks")
    .selectAll()
    .where("source_id", "=", sourceId)
    .where("block_number", ">=", fromBlock)
    .orderBy("block_number")
    .execute();
  return rows.map((r) => ({
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    parentHash: r.parent_hash,
  }));
}

export async function deleteRecentBlocks(
  db: Db,
  sourceId: string,
  range: { above?: number; below?: number },
): Promise<void> {
  if (range.above !== undefined)
    await db
      .deleteFrom("crawler_blocks")
      .where("source_id", "=", sourceId)
      .where("block_number", ">", range.above)
      .execute();
  if (range.below !== undefined)
    await db
      .deleteFrom("crawler_blocks")
      .where("source_id", "=", sourceId)
      .where("block_number", "<", range.below)
      .execute();
}

const numOrNull = (v: number | string | null) => (v === null ? null : Number(v));

function toLease(r: {
  source_id: string;
  holder: string;
  expires_at: number;
  acquired_at: number;
  head: number | null;
  synced_at: number | null;
  reported_at: number | null;
}): SourceLease {
  return {
    sourceId: r.source_id,
    holder: r.holder,
    expiresAt: Number(r.expires_at),
    acquiredAt: Number(r.acquired_at),
    head: numOrNull(r.head),
    syncedAt: numOrNull(r.synced_at),
    reportedAt: numOrNull(r.reported_at),
  };
}

export async function acquireSourceLease(
  db: Db,
  sourceId: string,
  holder: string,
  now: number,
  ttlMs: number,
  opts: { takeUnexpired?: boolean } = {},
): Promise<SourceLease> {
  const takeUnexpired = opts.takeUnexpired === true;
  // One statement: the row is taken only when it is ours or expired, atomically on both backends.
  await db
    .insertInto("source_leases")
    .values({ source_id: sourceId, holder, expires_at: now + ttlMs, acquired_at: now })
    .onConflict((oc) =>
      oc
        .column("source_id")
        .doUpdateSet((eb) => ({
          holder: eb.ref("excluded.holder"),
          expires_at: eb.ref("excluded.expires_at"),
          acquired_at: eb
            .case()
            .when("source_leases.holder", "=", holder)
            .then(eb.ref("source_leases.acquired_at"))
            .else(eb.ref("excluded.acquired_at"))
            .end(),
        }))
        .where((eb) =>
          eb.or([
            eb("source_leases.holder", "=", holder),
            eb("source_leases.expires_at", "<", now),
            // The caller holds the source's advisory lock: the previous holder is gone.
            eb.lit(takeUnexpired),
          ]),
        ),
    )
    .execute();
  const r = await db
    .selectFrom("source_leases")
    .selectAll()
    .where("source_id", "=", sourceId)
    .executeTakeFirstOrThrow();
  return toLease(r);
}

export async function holdsSourceLease(
  db: Db,
  dialect: "sqlite" | "postgres",
  sourceId: string,
  holder: string,
  now: number,
): Promise<boolean> {
  let q = db
    .selectFrom("source_leases")
    .select("source_id")
    .where("source_id", "=", sourceId)
    .where("holder", "=", holder)
    .where("expires_at", ">=", now);
  if (dialect === "postgres") q = q.forShare();
  return (await q.executeTakeFirst()) !== undefined;
}

export async function releaseSourceLease(db: Db, sourceId: string, holder: string): Promise<void> {
  await db
    .deleteFrom("source_leases")
    .where("source_id", "=", sourceId)
    .where("holder", "=", holder)
    .execute();
}

export async function listSourceLeases(db: Db): Promise<SourceLease[]> {
  const rows = await db.selectFrom("source_leases").selectAll().orderBy("source_id").execute();
  return rows.map(toLease);
}

export async function reportSourceProgress(
  db: Db,
  sourceId: string,
  holder: string,
  report: SourceProgressReport,
): Promise<void> {
  await db
    .updateTable("source_leases")
    .set({ head: report.head, synced_at: report.syncedAt, reported_at: report.now })
    .where("source_id", "=", sourceId)
    .where("holder", "=", holder)
    .execute();
}
