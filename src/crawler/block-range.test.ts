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

describe("hintedSize", () => {
  it.each([
    ["Try with this block range [0x10, 0x1f].", 16],
    ["query returned more than 10000 results", null],
    ["range [0x20, 0x10]", null],
  ])("%s → %s", (message, size) => {
    expect(hintedSize(message)).toBe(size);
  });
});
