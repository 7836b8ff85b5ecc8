import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * The change log (change-log.port.ts): one row per change of the map, written by the crawler in the
 * transaction of the change. `id` is the feed's cursor. Indexes, each for a query
 * (change-log.queries.ts):
 * - `change_events_source_block` (source, block): a reorg's retraction of the events above its
 *   common ancestor;
 * - `change_events_retracts` (retracts), partial: an event already retracted is not retracted
 *   again. Only retractions are in it, so the crawler's inserts of ordinary events skip it;
 * - `change_events_created` (created_at): pruning of the retention window.
 * `change_log_state` holds one row per key; `pruned_through` is the highest id pruned, so that a
 * cursor below it is told it expired even when the ids are not contiguous.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const id =
    dialect === "sqlite"
      ? sql.raw("id integer primary key autoincrement")
      : sql.raw("id bigserial primary key");
  await sql`create table change_events (
    ${id},
    type text not null,
    created_at bigint not null,
    source_id text not null,
    network text not null,
    provider text not null,
    token_id text not null,
    name text not null,
    tld text not null,
    block_number bigint not null,
    block_hash text not null,
    tx_hash text,
    block_time bigint,
    retracts bigint,
    project_id bigint,
    payload text not null)`.execute(db);
  await sql`create index change_events_source_block on change_events (source_id, block_number)`.execute(db);
  await sql`create index change_events_retracts on change_events (retracts) where retracts is not null`.execute(
    db,
  );
  await sql`create index change_events_created on change_events (created_at)`.execute(db);
  await sql`create table change_log_state (key text primary key, value bigint not null)`.execute(db);
}
