import { describe, expect, it } from "vitest";
import { AdaptiveRange } from "./block-range.js";
import { type RangePart, RangeParts } from "./range-fetch.js";

/** Parts over a fake node: each request resolves when the test says, with `perBlock` logs a block. */
function harness(from: number, to: number, perBlock: number, ahead: number) {
  const range = new AdaptiveRange({ initial: 1000, max: 10_000 });
  const requested: Array<[number, number]> = [];
  const parts = new RangeParts(
    from,
    to,
    range,
    (a, b): RangePart => {
      requested.push([a, b]);
      const logs = Promise.resolve(Array.from({ length: (b - a + 1) * perBlock }, () => ({}) as never)).then(
        (l) => {
          range.observed(b - a + 1, l.length);
          return l;
        },
      );
      return { from: a, to: b, logs, end: Promise.resolve(null) };
    },
    ahead,
  );
  return { parts, requested };
}

/** The blocks of parts `first`… to the last, taken in order (each part's logs awaited). */
async function blocksFrom(parts: RangeParts, first: number): Promise<number[]> {
  const covered: number[] = [];
  for (let i = first; ; i++) {
    const p = parts.part(i);
    if (p === null) return covered;
    await p.logs;
    for (let b = p.from; b <= p.to; b++) covered.push(b);
  }
}

describe("RangeParts", () => {
  it("asks for one block first, then parts sized by the density seen, a bounded number ahead", async () => {
    const { parts, requested } = harness(1, 40, 2_000, 3);
    // Before any density: only the first part, one block.
    expect(requested).toEqual([[1, 1]]);
    await parts.part(0)?.logs;
    // 2,000 logs a block: two blocks a part (~4,000 logs), three in flight ahead of part 0.
    parts.part(1);
    expect(requested).toEqual([
      [1, 1],
      [2, 3],
      [4, 5],
      [6, 7],
    ]);
  });

  it("covers the range exactly, in order, and ends with null", async () => {
    const { parts } = harness(10, 57, 500, 2);
    const covered = await blocksFrom(parts, 0);
    expect(covered).toEqual(Array.from({ length: 48 }, (_, i) => 10 + i));
  });

  it("asks a failed part again as its two halves, keeping the parts requested after it", async () => {
    const { parts, requested } = harness(1, 40, 2_000, 3);
    await parts.part(0)?.logs;
    parts.part(1);
    // Part 1 (blocks 2-3) failed: its halves are requested, parts 2 and 3 (4-7) are not again.
    parts.split(1);
    expect(requested.slice(4)).toEqual([
      [2, 2],
      [3, 3],
    ]);
    const covered = await blocksFrom(parts, 1);
    expect(covered).toEqual(Array.from({ length: 39 }, (_, i) => 2 + i));
    expect(requested.filter(([a]) => a === 4)).toEqual([[4, 5]]);
    // A one-block part has no halves.
    expect(() => parts.split(0)).toThrow(/cannot be split/);
  });
});
