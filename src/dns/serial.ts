import type { Checkpoint } from "../store/crawler-log.port.js";

/** A zone's serial and the index progress it was derived from. */
export interface SerialState {
  serial: number;
  progress: number;
}

/**
 * The index's progress: the sum of every source's checkpoint block. It grows as the crawler
 * applies blocks, whatever the clock says; a reorg rollback can lower it (nextSerial handles that).
 */
export function indexProgress(checkpoints: readonly Checkpoint[]): number {
  let sum = 0;
  for (const c of checkpoints) sum += c.blockNumber;
  return sum;
}

const MAX_SERIAL = 2 ** 32 - 1;

/**
 * The serial for the current progress, given the last one served or written: the progress itself
 * while it moves forward, the same serial while it stands still, and one more than before when it
 * moved back (a reorg, a cleared index), so that a secondary never sees the serial go down. Serial
 * arithmetic (RFC 1982) would allow a wrap; we stay below 2^32 instead.
 *
 * @example nextSerial({ serial: 120, progress: 120 }, 100) // { serial: 121, progress: 100 }
 */
export function nextSerial(previous: SerialState | null, progress: number): SerialState {
  const p = Math.min(Math.max(0, Math.floor(progress)), MAX_SERIAL);
  if (previous === null) return { serial: p, progress: p };
  if (p === previous.progress) return previous;
  if (p > previous.serial) return { serial: p, progress: p };
  return { serial: Math.min(previous.serial + 1, MAX_SERIAL), progress: p };
}

/**
 * The serial every DNS process answers (docs/dns.md, "One serial for every process"): one shared,
 * persisted record, `serial` in effect from `effectiveAt` (epoch ms) and `previous` before it.
 * Every process answers `servedSerial(record, now)`: all of them switch at the same instant of
 * the clock, whichever read the record first.
 */
export interface SerialRecord {
  serial: number;
  /** The serial answered until `effectiveAt`. */
  previous: number;
  /** The index progress `serial` stands for. */
  progress: number;
  effectiveAt: number;
}

/** The serial answered at `now` under a record. */
export function servedSerial(record: SerialRecord, now: number): number {
  return now >= record.effectiveAt ? record.serial : record.previous;
}

/**
 * The record to write when the index's progress moved, or null to keep the record: no record yet
 * (the first serial, in effect at once: no process answered one before), or the progress moved and
 * no switch is pending. While a switch is pending (`now` before its `effectiveAt`) nothing is
 * written: a process that read the record before the new one could not know it (it may answer
 * `record.previous` up to then), so the pending switch stands and the next one is proposed after it.
 * The new serial takes effect `delayMs` later: longer than any process goes without reading the
 * record (shared-serial.ts), so every process knows it before it counts.
 *
 * @example proposeSerial({ serial: 120, previous: 118, progress: 120, effectiveAt: 0 }, 125, 1000, 1000)
 *   // { serial: 125, previous: 120, progress: 125, effectiveAt: 2000 }
 */
export function proposeSerial(
  record: SerialRecord | null,
  progress: number,
  now: number,
  delayMs: number,
): SerialRecord | null {
  if (record === null) {
    const first = nextSerial(null, progress);
    return { serial: first.serial, previous: first.serial, progress: first.progress, effectiveAt: now };
  }
  if (now < record.effectiveAt) return null;
  const next = nextSerial({ serial: record.serial, progress: record.progress }, progress);
  if (next.progress === record.progress && next.serial === record.serial) return null;
  return {
    serial: next.serial,
    previous: record.serial,
    progress: next.progress,
    effectiveAt: now + delayMs,
  };
}
