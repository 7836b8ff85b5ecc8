import { describe, expect, it } from "vitest";
import { AdaptiveRange, hintedSize } from "./block-range.js";

describe("AdaptiveRange", () => {
  it.each([
    // [initial, max, blocks asked, logs returned, next size]
    [1000, 50_000, 1000, 10, 2000], // sparse: doubles
    [1000, 50_000, 1000, 10_000, 1000], // at the target: stays
    [1000, 50_000, 1000, 40_000, 500], // four times the target: halves at most
    [40_000, 50_000, 40_000, 0, 50_000], // capped at max
    [1000, 50_000, 10, 0, 1000], // a short range at the head says nothing
  ])("from %i (max %i), %i blocks with %i logs → %i", (initial, max, blocks, logs, next) => {
    const r = new AdaptiveRange({ initial, max });
    r.succeeded(blocks, logs);
    expect(r.size).toBe(next);
  });

  it("halves on a fault down to one block, never below", () => {
    const r = new AdaptiveRange({ initial: 5, max: 100 });
    r.failed();
    expect(r.size).toBe(2);
    r.failed();
    r.failed();
    r.failed();
    expect(r.size).toBe(1);
  });

  it("follows a provider's smaller suggested range", () => {
    const r = new AdaptiveRange({ initial: 10_000, max: 100_000 });
    r.failed("query returned more than 10000 results. Try with this block range [0x100, 0x17f].");
    expect(r.size).toBe(128);
  });
});

describe("AdaptiveRange.partBlocks", () => {
  it.each([
    // [blocks observed, logs observed (null: nothing yet), blocks remaining, blocks of the next part]
    [null, null, 500, 1], // no density yet: one block, to learn it
    [10, 40_000, 500, 1], // a bulk-minted chain: 4,000 logs a block
    [1000, 2000, 5000, 2000], // 2 logs a block: ~4,000 logs a part
    [1000, 2000, 300, 300], // never past the range
    [100, 0, 700, 200], // no logs: twice as wide, up to the rest of the range
    [100, 0, 150, 150],
  ])("after %s blocks with %s logs, %i blocks left → %i", (blocks, logs, remaining, next) => {
    const r = new AdaptiveRange({ initial: 1000, max: 50_000 });
    if (blocks !== null && logs !== null) r.observed(blocks, logs);
    expect(r.partBlocks(remaining)).toBe(next);
  });
});

describe("AdaptiveRange.partBlocks after a sparse start", () => {
  it("widens parts by doubling, so that a dense chain after a sparse block is not planned whole", () => {
    // A contract's deployment block (40 logs) before bulk-minted blocks of 10,000 logs each: the
    // sparse density alone would plan 100 blocks (1,000,000 logs) in one part.
    const r = new AdaptiveRange({ initial: 2_000, max: 100_000 });
    r.observed(1, 40);
    expect(r.partBlocks(99)).toBe(2);
    r.observed(2, 20_000); // far more than a part's aim: parts follow the new density at once
    expect(r.partBlocks(97)).toBe(1);
    r.observed(1, 10_000);
    expect(r.partBlocks(96)).toBe(1);
  });

  it("grows back as sparse parts arrive, a short part at a range's end not narrowing it", () => {
    const r = new AdaptiveRange({ initial: 2_000, max: 100_000 });
    const widths: number[] = [];
    for (let i = 0; i < 6; i++) {
      const w = r.partBlocks(100_000);
      widths.push(w);
      r.observed(w, w); // one log a block: about 4,000 blocks a part
    }
    expect(widths).toEqual([1, 2, 4, 8, 16, 32]);
    r.observed(3, 3); // the last part of a range
    expect(r.partBlocks(100_000)).toBe(64);
  });
});

describe("hintedSize", () => {
  it.each([
    ["Try with this block range [0x10, 0x1f].", 16],
    ["query returned more than 10000 results", null],
    ["range [0x20, 0x10]", null],
  ])("%s → %s", (message, size) => {
    expect(hintedSize(message)).toBe(size);
  });
});
