import { describe, expect, it } from "vitest";
import { findNetwork, NETWORKS } from "../../../domain/networks.js";
import { findProvider, PROVIDERS } from "../../../domain/providers.js";
import { NameQuery } from "./v1.schemas.js";

const names = (table: Record<string, { aliases: readonly string[] }>) =>
  Object.entries(table).flatMap(([k, v]) => [k, ...v.aliases]);

/** Variants of each value: cases, padding, the characters toUpperCase folds ("ſ", "ı", "ﬆ"), near misses. */
function variants(values: readonly string[]): string[] {
  const out = ["", " ", "\t\n", "MARS", "__proto__", "eth\u0000", "\ufffd", "E".repeat(300)];
  for (const v of values) {
    const lower = v.toLowerCase();
    out.push(v, lower, ` ${v} `, `${v}x`, `x${v}`, v.slice(1), `${v} ${v}`);
    out.push(
      lower.replace(/s/g, "ſ"),
      lower.replace(/i/g, "ı"),
      lower.replace(/st/g, "ﬆ"),
      lower.replace(/i/g, "İ"),
    );
    out.push(v.replace(/_/g, " "), v.replace(/_/g, "-"), v.replace(/_/g, " - "), v.replace(/_/g, "__"));
  }
  return out;
}

const matches = (pattern: unknown, value: string) => new RegExp(String(pattern), "u").test(value);

// The schema must accept exactly what the server reads: empty (absent) or a value the table knows.
describe("the network and provider patterns accept exactly what findNetwork and findProvider read", () => {
  it.each([
    ["network", findNetwork, names(NETWORKS)],
    ["provider", findProvider, names(PROVIDERS)],
  ] as const)("%s", (param, find, values) => {
    const { pattern } = NameQuery.properties[param];
    for (const v of variants(values))
      expect(matches(pattern, v), JSON.stringify(v)).toBe(v.trim() === "" || find(v) !== null);
  });

  it("booleans: true/false, 1/0, yes/no in any case, padded or empty", () => {
    const { pattern } = NameQuery.properties.explain;
    for (const v of ["", " ", "true", "TRUE", " No ", "1", "0", "yEs", "False"])
      expect(matches(pattern, v)).toBe(true);
    for (const v of ["maybe", "t", "2", "truee", "oui", "\u0130"]) expect(matches(pattern, v)).toBe(false);
  });
});
