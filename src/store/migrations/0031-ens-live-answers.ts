import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * `ens_live_answers`: live ENS answers shared by the API processes on PostgreSQL without Redis
 * (src/resolution/ens-live-cache.ts, docs/ens-offchain.md "Caching"): one row per name, the map's
 * stamp it was answered under, the answer (JSON) and when it ends (epoch ms).
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`create table ens_live_answers (
    name text primary key,
    stamp text not null,
    answer text not null,
    expires_at bigint not null
  )`.execute(db);
}
