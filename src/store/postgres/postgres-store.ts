import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { KyselyStore } from "../kysely-store.js";
import type { Database } from "../schema.js";

// int8 (bigint, bigserial) and numeric come back from pg as strings by default. Every bigint in
// this schema is an epoch-ms time, a block number or an id: all below 2^53, so numbers are safe.
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** PostgreSQL backend: the shared Kysely implementation over a pg pool. */
export function createPostgresStore(url: string, poolSize = 10): KyselyStore {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: types as pg.CustomTypesConfig });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on("error", () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return new KyselyStore("postgres", db);
}
