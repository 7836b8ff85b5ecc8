import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * The writer's view of its source on the lease row (crawler/source-lease.ts), for `/readyz` in every
 * process: the chain head it last saw, and when (epoch ms) its checkpoint last reached that head.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`alter table source_leases add column head bigint`.execute(db);
  await sql`alter table source_leases add column synced_at bigint`.execute(db);
  await sql`alter table source_leases add column reported_at bigint`.execute(db);
}
