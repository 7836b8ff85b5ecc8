import { join, resolve } from "node:path";
import { createPostgresStore } from "./postgres/postgres-store.js";
import { createSqliteStore } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

/**
 * Builds the store the configuration names and applies migrations: PostgreSQL for a
 * `postgres://` URL, otherwise SQLite (`sqlite:PATH`, `file:PATH`, or `DATA_DIR/omniname.db`).
 */
export async function createStore(opts: {
  databaseUrl?: string | undefined;
  dataDir: string;
}): Promise<Store> {
  const url = opts.databaseUrl;
  let store: Store;
  if (url && /^postgres(ql)?:\/\//.test(url)) store = createPostgresStore(url);
  else {
    const file = url ? url.replace(/^(sqlite|file):(\/\/)?/, "") : join(opts.dataDir, "omniname.db");
    store = createSqliteStore(resolve(file));
  }
  await store.migrate();
  return store;
}
