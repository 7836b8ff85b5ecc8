import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * `records_native` (domain_id, native_key), from migration 0001, goes: its one reader,
 * `setNativeRecord`'s delete of a domain's records by native key, finds them as well through the
 * primary key (domain_id, key): a domain's few records are one short range of it, filtered. The
 * index was a second B-tree entry for every record, written by every crawled record and every
 * imported one (PostgreSQL's bulk load built it again by a sort at the end). At 10,000,000 domains
 * it was 20 % of a SQLite store on disk and 13 % of a PostgreSQL one (bench/HISTORY.md, "Scale").
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`drop index if exists records_native`.execute(db);
}
