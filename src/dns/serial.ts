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
