import { sql } from "kysely";
import type { AccountsTables } from "../store/accounts.port.js";
import type { CrawlerLog } from "../store/crawler-log.port.js";
import type { StoreConnection } from "../store/store.js";
import { indexProgress, proposeSerial, type SerialRecord } from "./serial.js";

/**
 * The store the shared serial is kept in: its one row of `dns_zone_serial` (migration 0030), read
 * and written with plain SQL on the store's handle (`accountsDb`, as the change deriver does for
 * its cursor row: the store port has no part for one row of DNS state).
 */
export type SerialStore = Pick<StoreConnection, "transaction"> &
  AccountsTables &
  Pick<CrawlerLog, "listCheckpoints">;

interface Row {
  serial: number | string;
  previous: number | string;
  progress: number | string;
  effective_at: number | string;
}

/** The shared serial record, or null before the first one is written. */
export async function findSerialRecord(store: AccountsTables): Promise<SerialRecord | null> {
  const r =
    await sql<Row>`select serial, previous, progress, effective_at from dns_zone_serial where id = 1`.execute(
      store.accountsDb,
    );
  const row = r.rows[0];
  if (row === undefined) return null;
  // PostgreSQL returns bigint columns as strings.
  return {
    serial: Number(row.serial),
    previous: Number(row.previous),
    progress: Number(row.progress),
    effectiveAt: Number(row.effective_at),
  };
}

/**
 * Writes the next record when the index's progress moved and no switch is pending
 * (`proposeSerial`), and returns the record as it then stands. The decision is taken inside one
 * transaction, after the row is locked (a no-op update takes SQLite's write lock and PostgreSQL's
 * row lock first), with the clock read then: its `effectiveAt` is computed a moment before the
 * commit, never before a wait for the lock, so a process that read the record before this commit
 * still has the whole delay to read it again. Of several processes proposing at once, the first
 * writes and the others find its record.
 */
export async function advanceSerialRecord(
  store: SerialStore,
  progress: number,
  clock: () => number,
  delayMs: number,
): Promise<SerialRecord | null> {
  return store.transaction(async (tx) => {
    const db = tx.accountsDb;
    await sql`update dns_zone_serial set serial = serial where id = 1`.execute(db);
    const record = await findSerialRecord(tx);
    const next = proposeSerial(record, progress, clock(), delayMs);
    if (next === null) return record;
    const values = sql`${next.serial}, ${next.previous}, ${next.progress}, ${next.effectiveAt}`;
    if (record === null)
      await sql`insert into dns_zone_serial (id, serial, previous, progress, effective_at)
        values (1, ${values}) on conflict (id) do nothing`.execute(db);
    else
      await sql`update dns_zone_serial set serial = ${next.serial}, previous = ${next.previous},
        progress = ${next.progress}, effective_at = ${next.effectiveAt} where id = 1`.execute(db);
    // Another process inserted the first record meanwhile: it stands, as written.
    return findSerialRecord(tx);
  });
}

/** The index's progress, as the serial derives from it (serial.ts). */
export async function readProgress(store: Pick<CrawlerLog, "listCheckpoints">): Promise<number> {
  return indexProgress(await store.listCheckpoints());
}
