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
    [100, 0, 700, 700], // no logs: the rest of the range at once
  ])("after %s blocks with %s logs, %i blocks left → %i", (blocks, logs, remaining, next) => {
    const r = new AdaptiveRange({ initial: 1000, max: 50_000 });
    if (blocks !== null && logs !== null) r.observed(blocks, logs);
    expect(r.partBlocks(remaining)).toBe(next);
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
