import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
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
});
