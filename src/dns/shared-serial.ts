import { servedSerial, type SerialRecord, proposeSerial } from "./serial.js";
import {
  advanceSerialRecord,
  findSerialRecord,
  readProgress,
  type SerialStore,
} from "./zone-serial-record.js";

/**
 * How long after it is written a new serial takes effect. Every process reads the record at least
 * every READ_EVERY_MS while it answers, and trusts what it read for SWITCH_DELAY_MS −
 * WRITE_MARGIN_MS: a record written after that read takes effect later than that, so a process
 * never answers an old serial once another answers the new one. Short, because a secondary
 * hears of a change (NOTIFY) only once the serial switched, and a change seen while a switch is
 * pending waits for it (up to two delays): `test/dns/xfr-secondaries.test.ts` holds a new name to
 * reaching Knot and NSD within 2 s of its block (at 1 s it took 2.7 s once on the loaded machine).
 */
export const SWITCH_DELAY_MS = 500;
/**
 * How long a writer may take from reading the clock to its commit (both inside the transaction
 * that holds the row's lock: one update and the commit). A process trusts a read for
 * SWITCH_DELAY_MS minus this.
 */
const WRITE_MARGIN_MS = 200;
/** A read of the record is started (in the background) when the last one began this long ago. */
export const READ_EVERY_MS = 100;

/**
 * The zones' serial as a process answers it: the same for every process at each instant of the
 * clock (serial.ts, `SerialRecord`). `current` is the hot path (every answer, every answer-cache
 * hit): no I/O while what was read is still trusted.
 *
 * @example
 * const serial = createSharedSerial({ store, clock: Date.now });
 * const soaSerial = serial.current() ?? (await serial.ensure());
 */
export interface ZoneSerialSource {
  /** The serial to answer now; null when this process must read the record first (`ensure`). */
  current(): number | null;
  /** The serial to answer now, read from the store first when what was read is no longer trusted. */
  ensure(): Promise<number>;
}

export interface SharedSerialOptions {
  store: SerialStore;
  clock: () => number;
  delayMs?: number;
  readEveryMs?: number;
}

/**
 * The shared serial of one process. Each read takes the index's progress and the record, and
 * writes the next record when the progress moved and no switch is pending (the first process to
 * see it writes; zone-serial-record.ts). No timer: a read starts when an answer needs the serial
 * and the last read is older than `readEveryMs` (the zone transfers ask every 100 ms, so with
 * DNS_TSIG_KEYS the serial moves without queries too); an answer waits for it only when the last
 * read is no longer trusted. A read that fails leaves what was read; once that is no longer
 * trusted, `ensure` rejects and the answer is SERVFAIL, never an older serial.
 */
export function createSharedSerial(opts: SharedSerialOptions): ZoneSerialSource {
  const delayMs = opts.delayMs ?? SWITCH_DELAY_MS;
  const readEveryMs = opts.readEveryMs ?? READ_EVERY_MS;
  // The margin scales with a shorter delay (tests): a read is trusted for at least 60 % of it.
  const trustMs = delayMs - Math.min(WRITE_MARGIN_MS, delayMs * 0.4);
  let known: { record: SerialRecord; readAt: number } | null = null;
  let reading: Promise<void> | null = null;

  async function read(): Promise<void> {
    // The clock before the read: a record committed after this moment takes effect at least
    // delayMs − WRITE_MARGIN_MS later.
    const readAt = opts.clock();
    const progress = await readProgress(opts.store.crawlerLog);
    let record = await findSerialRecord(opts.store.accounts);
    if (proposeSerial(record, progress, opts.clock(), delayMs) !== null)
      record = await advanceSerialRecord(opts.store, progress, opts.clock, delayMs);
    if (record === null) throw new Error("dns_zone_serial: no record after writing one");
    if (known === null || readAt >= known.readAt) known = { record, readAt };
  }

  function startRead(): Promise<void> {
    reading ??= read().finally(() => {
      reading = null;
    });
    return reading;
  }

  function current(): number | null {
    const now = opts.clock();
    if (known === null || now >= known.readAt + trustMs) {
      startRead().catch(() => {});
      return null;
    }
    if (now - known.readAt >= readEveryMs) startRead().catch(() => {});
    return servedSerial(known.record, now);
  }

  async function ensure(): Promise<number> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const served = current();
      if (served !== null) return served;
      await startRead();
    }
    // Reads that each take longer than the trust window: the store is too slow to be sure.
    throw new Error("the zone serial could not be read in time");
  }

  return { current, ensure };
}
