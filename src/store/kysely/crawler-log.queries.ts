import type { Checkpoint, RecentBlock, SourceLease, SourceProgressReport } from "../crawler-log.port.js";
import { PostgresAdapter } from "kysely";
import { type Db, toCheckpoint } from "./rows.js";

/*
 * The crawler log's queries (crawler-log.port.ts), shared by both backends: checkpoints, recent
 * blocks, source leases and progress. The journal's are journal.queries.ts.
 */

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

export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
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
