import { dirname, join } from "node:path";
import pg from "pg";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { exportSnapshot, importSnapshot } from "../../src/store/snapshot.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";

export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** The URL of database `name` on the bench's PostgreSQL server (BENCH_PG_URL's). */
export function pgDatabaseUrl(name: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one statement on the PostgreSQL server's admin database. */
export async function pgAdmin(statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

/** A private PostgreSQL database holding the SQLite file's map and a key of its own. */
export async function copyToPostgres(
  file: string,
  name: string,
  pepper: string,
): Promise<{ url: string; key: string }> {
  await pgAdmin(`create database ${name}`);
  const url = pgDatabaseUrl(name);
  const sqlite = createSqliteStore(file);
  await sqlite.migrate();
  const snap = join(dirname(file), "map.jsonl");
  await exportSnapshot(sqlite, snap, { journal: false });
  await sqlite.close();
  const store = createPostgresStore(url);
  await store.migrate();
  const t = performance.now();
  await importSnapshot(store, snap);
  console.log(`copied the map to PostgreSQL in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const project = await store.projects.createProject({ name: "bench", plan: "internal" });
  const { key } = await createApiKey(store, pepper, project.id, "bench");
  await store.close();
  return { url, key };
}
