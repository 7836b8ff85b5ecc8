import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";

/**
 * A child that keeps the last 40 pages of 500 objects alive while it makes 4,000 of them, the shape
 * of a whole-map job's page loop, and prints the largest old generation it saw (measured: ~87 MB
 * by V8's default growth, ~45 MB bounded).
 * With `boundHeapGrowth` (what main.ts does for a `walksMap` command) V8 collects long before the
 * old generation reaches what its own growing factor allows.
 */
const CHILD = `
import { boundHeapGrowth } from "./src/cli/command.ts";
import v8 from "node:v8";
if (process.argv.includes("bounded")) boundHeapGrowth();
let peak = 0;
let page = [];
const pages = [];
for (let i = 0; i < 2_000_000; i++) {
  page.push({ i, text: ("line " + i).padEnd(120, "x"), records: [{ key: "a", value: String(i) }] });
  if (page.length === 500) {
    pages.push(page);
    if (pages.length > 40) pages.shift();
    page = [];
  }
  if (i % 5_000 === 0) {
    const old = v8.getHeapSpaceStatistics().find((s) => s.space_name === "old_space");
    peak = Math.max(peak, old.space_size);
  }
}
console.log(peak);
`;

function peakOldSpace(mode: "bounded" | "default"): number {
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CHILD, mode], {
    encoding: "utf8",
  });
  return Number(out.trim());
}

describe("boundHeapGrowth", () => {
  it("keeps the old generation of a garbage-heavy loop well below V8's default growth", () => {
    const unbounded = peakOldSpace("default");
    const bounded = peakOldSpace("bounded");
    expect(unbounded).toBeGreaterThan(0);
    expect(bounded).toBeLessThan(unbounded * 0.75);
  }, 120_000);

  it("applies to the commands that walk the whole map, not to the server or the crawler", () => {
    const walking = COMMANDS.filter((c) => c.walksMap)
      .map((c) => c.name)
      .sort();
    expect(walking).toEqual(["kyc", "scoring", "snapshot", "tlds", "zone"]);
  });
});
