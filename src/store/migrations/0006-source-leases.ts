import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/** One writer per crawled source (crawler/source-lease.ts): who holds a source, and until when (epoch ms). */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`create table source_leases (
    source_id text primary key, holder text not null, expires_at bigint not null,
    acquired_at bigint not null)`.execute(db);
}
