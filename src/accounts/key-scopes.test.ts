import { describe, expect, it } from "vitest";
import { compileProjectRules } from "../scoring/project-rules.js";
import {
  checkNamedScope,
  parseExpiry,
  parseKeyScopes,
  parseOverlapEnd,
  scopedSettings,
} from "./key-scopes.js";

const NOW = Date.UTC(2026, 10, 21, 12);
const DAY = 86_400_000;

describe("scopedSettings: a key's networks and providers narrow the project's settings", () => {
  const rows: Array<
    [string, Record<string, unknown>, Parameters<typeof scopedSettings>[1], string[] | null, string[] | null]
  > = [
    ["no limit keeps the project's settings", { includeExpired: true }, {}, null, null],
    ["a key's networks alone", {}, { networks: ["POLYGON", "BSC"] }, ["POLYGON", "BSC"], null],
    [
      "a network the project disabled stays off",
      { networks: { disabled: ["POLYGON"] } },
      { networks: ["POLYGON", "BSC"] },
      ["BSC"],
      null,
    ],
    [
      "the project's enabled list and the key's meet",
      { networks: { enabled: ["ETHEREUM", "POLYGON"] } },
      { networks: ["POLYGON", "BSC"] },
      ["POLYGON"],
      null,
    ],
    [
      "no common network: nothing visible",
      { networks: { enabled: ["ETHEREUM"] } },
      { networks: ["BSC"] },
      [],
      null,
    ],
    [
      "providers likewise",
      { providers: { disabled: ["NAMESPACE_B"] } },
      { providers: ["NAMESPACE_A", "NAMESPACE_B"] },
      null,
      ["NAMESPACE_A"],
    ],
  ];
  for (const [label, settings, scopes, networks, providers] of rows) {
    it(label, () => {
      const out = scopedSettings(settings, scopes);
      if (!scopes.networks && !scopes.providers) expect(out).toBe(settings);
      const rules = compileProjectRules(out);
      // The result must stay valid settings: a part that failed would be ignored (and grant all).
      expect(rules.warnings).toEqual([]);
      expect(rules.allowedNetworks === null ? null : [...rules.allowedNetworks]).toEqual(networks);
      expect(rules.allowedProviders === null ? null : [...rules.allowedProviders]).toEqual(providers);
      expect(out.includeExpired).toBe(settings.includeExpired);
    });
  }
});

describe("checkNamedScope", () => {
  const scopes = { networks: ["POLYGON"], providers: ["NAMESPACE_A"] };
  const rows: Array<[string, { networks?: string[]; providers?: string[] }, string | null]> = [
    ["a network in scope, by alias", { networks: ["matic"] }, null],
    ["a network outside", { networks: ["ETHEREUM"] }, "NETWORK_NOT_ALLOWED"],
    ["one outside among a list", { networks: ["POLYGON", "BSC"] }, "NETWORK_NOT_ALLOWED"],
    ["a provider outside", { providers: ["NAMESPACE_C"] }, "PROVIDER_NOT_ALLOWED"],
    ["an unknown value is left to the route's own 400", { networks: ["DOGE"] }, null],
    ["nothing named", {}, null],
  ];
  for (const [label, named, code] of rows)
    it(label, () => expect(checkNamedScope(scopes, named)?.code ?? null).toBe(code));
  it("lets anything through a key without network or provider limits", () =>
    expect(checkNamedScope({ endpoints: ["resolve"] }, { networks: ["BSC"] })).toBeNull());
});

describe("parsing a key's limits", () => {
  it("canonicalizes, orders and deduplicates", () =>
    expect(parseKeyScopes({ endpoints: ["Changes", "resolve", "resolve"], providers: null })).toEqual({
      endpoints: ["resolve", "changes"],
    }));
  it("takes an expiry in the future and refuses one in the past or too far", () => {
    expect(parseExpiry("2026-11-22T00:00:00+02:00", NOW)).toBe(Date.parse("2026-11-22T00:00:00+02:00"));
    expect(parseExpiry(null, NOW)).toBeNull();
    expect(() => parseExpiry(new Date(NOW).toISOString(), NOW)).toThrow(/in the past/);
    expect(() => parseExpiry("2040-01-01T00:00:00Z", NOW)).toThrow(/ten years/);
  });
  it("bounds a rotation's overlap to 30 days and requires it", () => {
    expect(parseOverlapEnd(new Date(NOW + 30 * DAY).toISOString(), NOW)).toBe(NOW + 30 * DAY);
    expect(() => parseOverlapEnd(new Date(NOW + 30 * DAY + 1000).toISOString(), NOW)).toThrow(/30 days/);
    expect(() => parseOverlapEnd(undefined, NOW)).toThrow(/required/);
    expect(() => parseOverlapEnd(new Date(NOW - 60_000).toISOString(), NOW)).toThrow(/past/);
  });
});
