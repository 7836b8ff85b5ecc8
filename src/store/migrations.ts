import type { Kysely } from "kysely";
import * as m0001 from "./migrations/0001-foundation.js";
import type { Dialect } from "./store.js";

export interface Migration {
  name: string;
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/**
 * Every migration, in order. Append only: a released migration is never edited. Each feature adds
 * its own file under migrations/ and one line here.
 */
export const MIGRATIONS: readonly Migration[] = [{ name: "0001-foundation", up: m0001.up }];
