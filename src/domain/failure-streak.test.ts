import { describe, expect, it } from "vitest";
import { createFailureStreak } from "./failure-streak.js";

describe("failure streak", () => {
  it("marks only the first failure of a run, and reports the run when it ends", () => {
    let now = 1_000;
    const s = createFailureStreak(() => now);
    expect(s.succeeded()).toBeNull(); // nothing to end
    expect([s.failed(), s.failed(), s.failed()]).toEqual([true, false, false]);
    expect(s.failing).toBe(true);
    now = 4_500;
    expect(s.succeeded()).toEqual({ ms: 3_500, failures: 3 });
    expect(s.failing).toBe(false);
    expect(s.succeeded()).toBeNull(); // a second success ends nothing
    expect(s.failed()).toBe(true); // a new run begins
  });
});
