import { describe, expect, it } from "vitest";
import { nextSerial, proposeSerial, type SerialRecord, servedSerial } from "./serial.js";

describe("nextSerial", () => {
  const rows: Array<[string, { serial: number; progress: number } | null, number, number]> = [
    ["the first serial is the progress", null, 120, 120],
    ["the progress moved forward: the progress", { serial: 120, progress: 120 }, 125, 125],
    ["the progress stood still: the same serial", { serial: 121, progress: 100 }, 100, 121],
    ["the progress moved back (a reorg): one more", { serial: 120, progress: 120 }, 100, 121],
    ["forward but not past the serial: one more", { serial: 130, progress: 100 }, 110, 131],
    ["never past 2^32 − 1", { serial: 2 ** 32 - 1, progress: 5 }, 4, 2 ** 32 - 1],
  ];
  it.each(rows)("%s", (_label, previous, progress, want) => {
    expect(nextSerial(previous, progress).serial).toBe(want);
  });
});

describe("servedSerial: every process switches at the same instant", () => {
  const record: SerialRecord = { serial: 130, previous: 120, progress: 130, effectiveAt: 1_000 };
  const rows: Array<[string, number, number]> = [
    ["before the switch: the previous serial", 999, 120],
    ["at the switch: the new serial", 1_000, 130],
    ["after it", 5_000, 130],
  ];
  it.each(rows)("%s", (_label, now, want) => expect(servedSerial(record, now)).toBe(want));
});

describe("proposeSerial", () => {
  /** A record as [serial, previous, progress, effectiveAt]. */
  const rec = (serial: number, previous: number, progress: number, effectiveAt: number): SerialRecord => ({
    serial,
    previous,
    progress,
    effectiveAt,
  });
  const settled = rec(130, 120, 130, 1_000);
  // Each row: the record, the progress read, the clock, the record to write (null: none).
  const rows: Array<[string, SerialRecord | null, number, number, SerialRecord | null]> = [
    ["no record: the progress, in effect at once", null, 77, 500, rec(77, 77, 77, 500)],
    ["the progress did not move: nothing to write", settled, 130, 2_000, null],
    ["the progress moved: the next serial, one delay later", settled, 140, 2_000, rec(140, 130, 140, 3_000)],
    ["a switch still pending: nothing written until it took effect", settled, 140, 999, null],
    ["the progress moved back: one more, never lower", settled, 90, 2_000, rec(131, 130, 90, 3_000)],
  ];
  it.each(rows)("%s", (_label, record, progress, now, want) => {
    expect(proposeSerial(record, progress, now, 1_000)).toEqual(want);
  });

  it("a run of proposals never answers a lower serial at any instant (RFC 1982 order, no wrap)", () => {
    let record: SerialRecord | null = null;
    let last = -1;
    // Progress that climbs, stalls and falls back (reorgs), asked every 100 ms of a fake clock.
    const progress = [5, 9, 9, 3, 12, 12, 40, 38, 38, 41, 2, 2, 50];
    for (let now = 0; now < 30_000; now += 100) {
      record = proposeSerial(record, progress[Math.floor(now / 2_300)] ?? 60, now, 1_000) ?? record;
      const served = servedSerial(record!, now);
      expect(served).toBeGreaterThanOrEqual(last);
      last = served;
    }
    expect(last).toBe(50);
  });
});
