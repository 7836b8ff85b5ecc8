import { join, resolve } from "node:path";
import { createPostgresStore } from "./postgres/postgres-store.js";
import { createSqliteStore, type SqliteStoreOptions } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

/** How a process tunes its store beyond the configuration (SQLite only: see SqliteStoreOptions). */
export interface StoreTuning {
  sqlite?: SqliteStoreOptions;
}

/**
 * Builds the store the configuration names and applies migrations: PostgreSQL for a
 * `postgres://` URL, otherwise SQLite (`sqlite:PATH`, `file:PATH`, or `DATA_DIR/omniname.db`).
 */
export async function createStore(opts: {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** SQLite only: the read connection's tuning (a one-pass export: small mmap, no read cache). */
  sqlite?: SqliteStoreOptions;
}): Promise<Store> {
  const url = opts.databaseUrl;
  let store: Store;
  if (url && /^postgres(ql)?:\/\//.test(url)) store = createPostgresStore(url);
  else {
    const file = url ? url.replace(/^(sqlite|file):(\/\/)?/, "") : join(opts.dataDir, "omniname.db");
    store = createSqliteStore(resolve(file), opts.sqlite);
  }
  await store.migrate();
  return store;
}
