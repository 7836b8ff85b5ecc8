import { describe, expect, it } from "vitest";
import { compileProjectRules, compiledRulesOf, parseProjectRules } from "./project-rules.js";

describe("parseProjectRules", () => {
  it.each([
    { title: "empty settings", input: {}, value: {} },
    {
      title: "aliases become wire values",
      input: { providerPriority: ["ens", "UNS"], networks: { disabled: ["bnb"] } },
      value: { providerPriority: ["NAMESPACE_C", "NAMESPACE_B"], networks: { disabled: ["BSC"] } },
    },
    {
      title: "exception names are normalized",
      input: {
        exceptions: [
          { domain: " Alice.WALLET ", provider: "fns", network: "polygon" },
          { tld: ".X", provider: "NAMESPACE_B" },
        ],
      },
      value: {
        exceptions: [
          { domain: "alice.wallet", provider: "NAMESPACE_A", network: "POLYGON" },
          { tld: "x", provider: "NAMESPACE_B" },
        ],
      },
    },
    {
      title: "punycode TLDs are stored in Unicode",
      input: { exceptions: [{ tld: "xn--p1ai", provider: "NAMESPACE_A" }] },
      value: { exceptions: [{ tld: "рф", provider: "NAMESPACE_A" }] },
    },
    { title: "includeExpired", input: { includeExpired: true }, value: { includeExpired: true } },
    { title: "live lookups turned off", input: { liveLookups: false }, value: { liveLookups: false } },
  ])("accepts $title", ({ input, value }) => {
    expect(parseProjectRules(input)).toEqual({ ok: true, value });
  });

  it.each([
    { title: "a non-object", input: [], error: "project rules must be a JSON object" },
    { title: "an unknown setting", input: { priority: [] }, error: "priority: unknown setting" },
    {
      title: "an unknown provider",
      input: { providerPriority: ["NAMESPACE_Z"] },
      error: 'providerPriority[0]: unknown provider "NAMESPACE_Z"',
    },
    {
      title: "a provider listed twice",
      input: { providerPriority: ["ENS", "NAMESPACE_C"] },
      error: "providerPriority[1]: NAMESPACE_C is listed twice",
    },
    {
      title: "an unknown network",
      input: { networks: { enabled: ["MOON"] } },
      error: 'networks.enabled[0]: unknown network "MOON"',
    },
    {
      title: "enabled and disabled at once",
      input: { providers: { enabled: ["ENS"], disabled: ["ens"] } },
      error: "providers: NAMESPACE_C is both enabled and disabled",
    },
    {
      title: "an unknown toggle field",
      input: { networks: { on: ["BSC"] } },
      error: "networks.on: unknown field",
    },
    {
      title: "an exception with both domain and tld",
      input: { exceptions: [{ domain: "a.x", tld: "x", provider: "ENS" }] },
      error: "exceptions[0]: give exactly one of domain, tld",
    },
    {
      title: "an exception with neither",
      input: { exceptions: [{ provider: "ENS" }] },
      error: "exceptions[0]: give exactly one of domain, tld",
    },
    {
      title: "an exception on a network the provider lacks",
      input: { exceptions: [{ tld: "eth", provider: "ENS", network: "POLYGON" }] },
      error: "exceptions[0]: NAMESPACE_C has no names on POLYGON",
    },
    {
      title: "an invalid exception name",
      input: { exceptions: [{ domain: "nodot", provider: "ENS" }] },
      error: "exceptions[0].domain: not a valid name",
    },
    {
      title: "a TLD with a dot",
      input: { exceptions: [{ tld: "a.b", provider: "ENS" }] },
      error: "exceptions[0].tld: not a valid top-level label",
    },
    {
      title: "two exceptions for one domain",
      input: {
        exceptions: [
          { domain: "a.x", provider: "ENS" },
          { domain: "A.X", provider: "UNS" },
        ],
      },
      error: "exceptions[1]: a second exception for domain a.x",
    },
    {
      title: "includeExpired not a boolean",
      input: { includeExpired: "yes" },
      error: "includeExpired must be true or false",
    },
    {
      title: "liveLookups not a boolean",
      input: { liveLookups: "off" },
      error: "liveLookups must be true or false",
    },
  ])("refuses $title", ({ input, error }) => {
    const r = parseProjectRules(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(error);
  });
});

describe("compileProjectRules", () => {
  it("leaves the sets null when everything is allowed", () => {
    const c = compileProjectRules({
      networks: { enabled: ["ETHEREUM", "POLYGON", "BSC", "AURORA", "SOLANA"] },
    });
    expect(c.allowedNetworks).toBeNull();
    expect(c.allowedProviders).toBeNull();
  });

  it("keeps the valid parts of stored settings that no longer validate", () => {
    const c = compileProjectRules({ providers: { disabled: ["NAMESPACE_B"] }, providerPriority: ["NOPE"] });
    expect(c.allowedProviders?.has("NAMESPACE_B")).toBe(false);
    expect(c.allowedProviders?.has("NAMESPACE_A")).toBe(true);
    expect(c.priority.size).toBe(0);
    expect(c.warnings).toEqual(['providerPriority[0]: unknown provider "NOPE"']);
  });

  it("caches per settings object", () => {
    const settings = { providerPriority: ["NAMESPACE_B"] };
    expect(compiledRulesOf(settings)).toBe(compiledRulesOf(settings));
    expect(compiledRulesOf({ ...settings })).not.toBe(compiledRulesOf(settings));
  });
});
