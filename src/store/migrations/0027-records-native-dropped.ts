import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * `records_native` (domain_id, native_key), from migration 0001, goes: its one reader,
 * `setNativeRecord`'s delete of a domain's records by native key, finds them as well through the
 * primary key (domain_id, key): a domain's few records are one short range of it, filtered. The
 * index was a second B-tree entry for every record: written by every crawled record and every
 * imported one (sorted again at the end of each bulk load, ~18 % of the records' pages on disk).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`drop index if exists records_native`.execute(db);
}
