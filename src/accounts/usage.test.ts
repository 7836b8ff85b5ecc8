import { describe, expect, it } from "vitest";
import { dayOf, latencyBucket } from "./usage.js";

describe("latencyBucket", () => {
  it.each([
    [0.1, "0.5"],
    [0.5, "0.5"],
    [0.51, "1"],
    [4, "5"],
    [99, "100"],
    [10_000, "10000"],
    [10_001, "inf"],
  ])("%s ms → bucket %s", (ms, bucket) => {
    expect(latencyBucket(ms)).toBe(bucket);
  });
});

describe("dayOf", () => {
  it("is the UTC day", () => {
    expect(dayOf(Date.UTC(2026, 10, 21, 23, 59, 59))).toBe("2026-11-21");
    expect(dayOf(Date.UTC(2026, 10, 22))).toBe("2026-11-22");
  });
});
