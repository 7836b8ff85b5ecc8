import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * `dns_zone_serial`: the one zone serial every DNS process answers (src/dns/zone-serial.ts,
 * docs/dns.md "One serial for every process"). One row (id 1): the serial in effect from
 * `effective_at` (epoch ms), the one before it (`previous`, answered until then), and the index
 * progress the serial stands for. Persisted, so a restart never answers a lower serial.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`create table dns_zone_serial (
    id integer primary key,
    serial bigint not null,
    previous bigint not null,
    progress bigint not null,
    effective_at bigint not null
  )`.execute(db);
}
