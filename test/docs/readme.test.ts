import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { configTable } from "../../src/config/config-doc.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("README", () => {
  it("starts with the two commands", () => {
    const head = readme.slice(0, 1200);
    expect(head).toContain("npm install && npm start");
    expect(head).toContain("npm test");
  });

  it("has the configuration table generated from the config schema (npx tsx scripts/config-table.ts)", () => {
    expect(readme).toContain(configTable());
  });

  it("lists every omniname command in its commands table, and no other", () => {
    const section = readme.slice(readme.indexOf("## Commands"), readme.indexOf("## Configuration"));
    const listed = [...section.matchAll(/^\| `([a-z][a-z-]*)/gm)].map((m) => m[1]);
    const alsoListed = [...section.matchAll(/, `([a-z]+)[ `]/g)].map((m) => m[1]);
    const names = new Set([...listed, ...alsoListed]);
    expect([...names].sort()).toEqual(COMMANDS.map((c) => c.name).sort());
  });
});
