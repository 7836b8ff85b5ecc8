import type { AccountsDb } from "../store/accounts.port.js";
import type { CrawlerLog } from "../store/crawler-log.port.js";
import type { Store } from "../store/store.js";
import { indexProgress, proposeSerial, type SerialRecord } from "./serial.js";

/**
 * The store the shared serial is kept in: its one row of `dns_zone_serial` (migration 0030), read
 * and written through the store's table handle (`accounts`, widened to this one table). The
 * store port has no part for one row of DNS state yet; the store's files were another stream's
 * when it was added (a `DnsSerial` part of the port is the natural home).
 */
export type SerialStore = Pick<Store, "transaction" | "accounts"> & {
  crawlerLog: Pick<CrawlerLog, "listCheckpoints">;
};

// A type, not an interface: Kysely's `withTables` wants an index signature.
type SerialTable = {
  dns_zone_serial: {
    id: number;
    // PostgreSQL returns bigint columns as strings.
    serial: number | string;
    previous: number | string;
    progress: number | string;
    effective_at: number | string;
  };
};

function serialTable(db: AccountsDb) {
  return db.withTables<SerialTable>();
}

/** The shared serial record, or null before the first one is written. */
export async function findSerialRecord(db: AccountsDb): Promise<SerialRecord | null> {
  const row = await serialTable(db)
    .selectFrom("dns_zone_serial")
    .select(["serial", "previous", "progress", "effective_at"])
    .where("id", "=", 1)
    .executeTakeFirst();
  if (row === undefined) return null;
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
    const db = serialTable(tx.accounts);
    await db
      .updateTable("dns_zone_serial")
      .set((eb) => ({ serial: eb.ref("serial") }))
      .where("id", "=", 1)
      .execute();
    const record = await findSerialRecord(tx.accounts);
    const next = proposeSerial(record, progress, clock(), delayMs);
    if (next === null) return record;
    const values = {
      serial: next.serial,
      previous: next.previous,
      progress: next.progress,
      effective_at: next.effectiveAt,
    };
    if (record === null)
      await db
        .insertInto("dns_zone_serial")
        .values({ id: 1, ...values })
        .onConflict((oc) => oc.column("id").doNothing())
        .execute();
    else await db.updateTable("dns_zone_serial").set(values).where("id", "=", 1).execute();
    // Another process inserted the first record meanwhile: it stands, as written.
    return findSerialRecord(tx.accounts);
  });
}

/** The index's progress, as the serial derives from it (serial.ts). */
export async function readProgress(store: Pick<CrawlerLog, "listCheckpoints">): Promise<number> {
  return indexProgress(await store.listCheckpoints());
}
