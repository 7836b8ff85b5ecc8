import { PostgresAdapter, sql } from "kysely";
import type { ChangeEvent, ChangeEventWrite, ChangeType } from "../../domain/change-events.js";
import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import type { ChangeLogBounds } from "../change-log.port.js";
import type { ChangeEventsTable } from "../schema.js";
import { jsonColumn, pgRowsFrom } from "./pg-json-columns.js";
import { type Db, safeText } from "./rows.js";

/* The change log's queries (change-log.port.ts), shared by both backends. */

/**
 * Key of the PostgreSQL advisory lock that orders appends: taken for the rest of the writing
 * transaction, so ids are handed out in commit order and a reader never skips a late commit.
 */
const APPEND_LOCK = 0x6f6d6e69; // "omni"
/** Rows per insert statement (SQLite's default limit is 32,766 bound values; 16 columns a row). */
const ROWS_PER_INSERT = 500;
const PRUNED_THROUGH = "pruned_through";
/** PostgreSQL: rows per statement, each column one JSON array parameter (pg-json-columns.ts). */
const PG_ROWS_PER_INSERT = 5_000;

/** The columns of a change event's row, in the order `pushChangeEvent` gives its values. */
export const CHANGE_EVENT_COLUMNS = [
  "type",
  "created_at",
  "source_id",
  "network",
  "provider",
  "token_id",
  "name",
  "tld",
  "block_number",
  "block_hash",
  "tx_hash",
  "block_time",
  "retracts",
  "project_id",
  "payload",
] as const satisfies ReadonlyArray<keyof Omit<ChangeEventsTable, "id">>;

/** The PostgreSQL type of each change-event column: the array parameters of `appendPostgres`. */
const PG_CHANGE_EVENT_TYPES: Record<(typeof CHANGE_EVENT_COLUMNS)[number], "text" | "bigint"> = {
  type: "text",
  created_at: "bigint",
  source_id: "text",
  network: "text",
  provider: "text",
  token_id: "text",
  name: "text",
  tld: "text",
  block_number: "bigint",
  block_hash: "text",
  tx_hash: "text",
  block_time: "bigint",
  retracts: "bigint",
  project_id: "bigint",
  payload: "text",
};

/**
 * PostgreSQL: one statement for many rows, each column passed as one JSON array and turned back
 * into rows in their order (pg-json-columns.ts: the ids follow it). The same rows as the
 * multi-row insert, without a 7,500-parameter query built and compiled per 500 rows. The columns,
 * their order and the values are CHANGE_EVENT_COLUMNS' and `pushChangeEvent`'s, as on SQLite.
 */
async function appendPostgres(db: Db, events: readonly ChangeEventWrite[]): Promise<void> {
  const arrays: unknown[][] = CHANGE_EVENT_COLUMNS.map(() => []);
  const values: unknown[] = [];
  for (const e of events) {
    values.length = 0;
    pushChangeEvent(values, e);
    for (let i = 0; i < values.length; i++) arrays[i].push(values[i]);
  }
  const names = sql.raw(CHANGE_EVENT_COLUMNS.join(", "));
  const rows = pgRowsFrom(
    CHANGE_EVENT_COLUMNS.map((c, i) => [c, PG_CHANGE_EVENT_TYPES[c], jsonColumn(arrays[i])] as const),
  );
  await sql`insert into change_events (${names}) ${rows}`.execute(db);
}

/**
 * Appends a change event's values in CHANGE_EVENT_COLUMNS order: the SQLite bulk path binds them
 * directly (no row object per event), and `changeEventRow` names them, so both write the same row.
 */
export function pushChangeEvent(values: unknown[], e: ChangeEventWrite): void {
  values.push(
    e.type,
    e.createdAt,
    e.sourceId,
    e.network,
    e.provider,
    e.tokenId,
    safeText(e.name),
    safeText(e.tld),
    e.blockNumber,
    e.blockHash,
    e.txHash,
    e.blockTime,
    e.retracts,
    e.projectId,
    safeText(JSON.stringify(e.payload)),
  );
}

/** A change event as its row: `pushChangeEvent`'s values under CHANGE_EVENT_COLUMNS' names. */
export function changeEventRow(e: ChangeEventWrite): Omit<ChangeEventsTable, "id"> {
  const values: unknown[] = [];
  pushChangeEvent(values, e);
  const row: Record<string, unknown> = {};
  for (let i = 0; i < CHANGE_EVENT_COLUMNS.length; i++) row[CHANGE_EVENT_COLUMNS[i]] = values[i];
  return row as Omit<ChangeEventsTable, "id">;
}

function toEvent(r: ChangeEventsTable & { id: number }): ChangeEvent {
  return {
    id: Number(r.id),
    type: r.type as ChangeType,
    createdAt: Number(r.created_at),
    sourceId: r.source_id,
    network: r.network as Network,
    provider: r.provider as Provider,
    tokenId: r.token_id,
    name: r.name,
    tld: r.tld,
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    txHash: r.tx_hash,
    blockTime: r.block_time === null ? null : Number(r.block_time),
    retracts: r.retracts === null ? null : Number(r.retracts),
    projectId: r.project_id === null ? null : Number(r.project_id),
    payload: JSON.parse(r.payload),
  };
}

export async function appendChangeEvents(db: Db, events: ChangeEventWrite[]): Promise<void> {
  if (events.length === 0) return;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`select pg_advisory_xact_lock(${APPEND_LOCK})`.execute(db);
    for (let i = 0; i < events.length; i += PG_ROWS_PER_INSERT)
      await appendPostgres(db, events.slice(i, i + PG_ROWS_PER_INSERT));
    return;
  }
  for (let i = 0; i < events.length; i += ROWS_PER_INSERT)
    await db
      .insertInto("change_events")
      .values(events.slice(i, i + ROWS_PER_INSERT).map(changeEventRow))
      .execute();
}

export async function findChangeEventsAfter(db: Db, after: number, limit: number): Promise<ChangeEvent[]> {
  const rows = await db
    .selectFrom("change_events")
    .selectAll()
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => toEvent(r as ChangeEventsTable & { id: number }));
}

export async function findRetractableChangeEvents(
  db: Db,
  sourceId: string,
  blockNumber: number,
): Promise<ChangeEvent[]> {
  const rows = await db
    .selectFrom("change_events as e")
    .selectAll("e")
    .where("e.source_id", "=", sourceId)
    .where("e.block_number", ">", blockNumber)
    .where("e.type", "!=", "change.retracted")
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("change_events as r")
            .select("r.id")
            .where("r.retracts", "is not", null)
            .whereRef("r.retracts", "=", "e.id"),
        ),
      ),
    )
    .orderBy("e.id")
    .execute();
  return rows.map((r) => toEvent(r as ChangeEventsTable & { id: number }));
}

export async function changeLogBounds(db: Db): Promise<ChangeLogBounds> {
  const [top, state] = await Promise.all([
    db
      .selectFrom("change_events")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirst(),
    db.selectFrom("change_log_state").select("value").where("key", "=", PRUNED_THROUGH).executeTakeFirst(),
  ]);
  const prunedThrough = state ? Number(state.value) : 0;
  const newest = top?.id === null || top?.id === undefined ? 0 : Number(top.id);
  return { prunedThrough, newest: Math.max(newest, prunedThrough) };
}

export async function pruneChangeEvents(db: Db, before: number, limit: number): Promise<number> {
  const last = await db
    .selectFrom("change_events")
    .select("id")
    .where("created_at", "<", before)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  if (!last) return 0;
  // Pruned in id order up to the newest expired event, a page at a time.
  const upTo = await db
    .selectFrom("change_events")
    .select("id")
    .where("id", "<=", Number(last.id))
    .orderBy("id")
    .offset(Math.max(0, limit - 1))
    .limit(1)
    .executeTakeFirst();
  const through = upTo ? Number(upTo.id) : Number(last.id);
  const r = await db.deleteFrom("change_events").where("id", "<=", through).executeTakeFirst();
  await db
    .insertInto("change_log_state")
    .values({ key: PRUNED_THROUGH, value: through })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value: through }))
    .execute();
  return Number(r.numDeletedRows);
}
