import type { Kysely } from "kysely";
import { KyselyStore } from "../../src/store/kysely-store.js";
import type { Database } from "../../src/store/schema.js";
import type { Store } from "../../src/store/store.js";

/**
 * The backend's own query builder, for tests that check rows the port does not expose (journal
 * rows of orphaned blocks, raw record columns). Production code goes through the port.
 */
export function rawDb(store: Store): Kysely<Database> {
  if (!(store instanceof KyselyStore)) throw new Error("rawDb: not a Kysely-backed store");
  return store.db;
}
