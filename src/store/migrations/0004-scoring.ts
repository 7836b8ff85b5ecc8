import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/** The operator's KYC list (scoring-data.port.ts; parsed by scoring/kyc-list.ts): owner addresses, lower case. */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`create table kyc_addresses (
    address text primary key, source text not null default '', imported_at bigint not null)`.execute(db);
}
