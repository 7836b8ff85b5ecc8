import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

type Version = [number, number, number];

function parse(v: string): Version {
  const [a = 0, b = 0, c = 0] = v.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : 0));
  return [a, b, c];
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** The subset of npm's semver ranges that `engines.node` fields use (>=, >, <, <=, ^, ~, x, *). */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split("||").some((alternative) => {
    const comparators = alternative
      .trim()
      .replace(/([<>=^~]+)\s+/g, "$1")
      .split(/\s+/)
      .filter(Boolean);
    return comparators.every((c) => {
      const m = /^([<>=^~]*)v?(.*)$/.exec(c)!;
      const [op, raw] = [m[1], m[2]];
      if (raw === "*" || raw === "x" || raw === "") return true;
      const parts = raw.split(".");
      const wild = parts.findIndex((p) => p === "x" || p === "*");
      const r = parse(raw);
      // "20.x", "10.*", "16": any version of that prefix; ">=12.*": the wildcard counts as 0.
      if (op === "" && (wild >= 0 || parts.length < 3)) {
        const n = wild >= 0 ? wild : parts.length;
        return v.slice(0, n).every((x, i) => x === r[i]);
      }
      const cmp = compare(v, r);
      if (op === ">=") return cmp >= 0;
      if (op === ">") return cmp > 0;
      if (op === "<=") return cmp <= 0;
      if (op === "<") return cmp < 0;
      if (op === "^") return cmp >= 0 && (r[0] > 0 ? v[0] === r[0] : v[0] === 0 && v[1] === r[1]);
      if (op === "~") return cmp >= 0 && v[0] === r[0] && v[1] === r[1];
      return cmp === 0;
    });
  });
}

describe("the supported Node version", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  const lock = JSON.parse(readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8")) as {
    packages: Record<string, { engines?: { node?: string } | string[] }>;
  };
  const node = process.versions.node;

  it.each([
    ["20.20.2", ">=22", false],
    ["20.20.2", "^20.19.0 || >=22.12.0", true],
    ["20.18.0", "^20.19.0 || >=22.12.0", false],
    ["20.20.2", "20.x || 22.x", true],
    ["20.20.2", ">= 0.8", true],
    ["20.20.2", "10.* || >= 12.*", true],
  ] as const)("reads %s against %j", (v, range, ok) => {
    expect(satisfies(v, range)).toBe(ok);
  });

  it("is the one package.json states, and every installed package supports it (no EBADENGINE)", () => {
    expect(satisfies(node, pkg.engines.node)).toBe(true);
    const unsupported = Object.entries(lock.packages)
      .map(([path, p]) => [path, Array.isArray(p.engines) ? undefined : p.engines?.node] as const)
      .filter(([, range]) => range !== undefined && !satisfies(node, range))
      .map(([path, range]) => `${path} needs node ${range}`);
    expect(unsupported).toEqual([]);
  });
});
