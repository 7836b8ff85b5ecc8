import { describe, expect, it } from "vitest";
import {
  PROVIDERS,
  PROVIDER_ORDER,
  activePairs,
  findProvider,
  isProvider,
  providerOfProtocol,
} from "./providers.js";

describe("findProvider", () => {
  it.each([
    ["NAMESPACE_A", "NAMESPACE_A"],
    ["NAMESPACE_B", "NAMESPACE_B"],
    ["NAMESPACE_C", "NAMESPACE_C"],
    ["NAMESPACE_D", "NAMESPACE_D"],
    ["namespace_a", "NAMESPACE_A"],
    ["Namespace_C", "NAMESPACE_C"],
    [" NAMESPACE_B ", "NAMESPACE_B"],
    ["FNS", "NAMESPACE_A"],
    ["fns", "NAMESPACE_A"],
    ["FREENAME", "NAMESPACE_A"],
    ["Freename", "NAMESPACE_A"],
    ["UNS", "NAMESPACE_B"],
    ["UNSTOPPABLE_DOMAINS", "NAMESPACE_B"],
    ["unstoppable_domains", "NAMESPACE_B"],
    ["unstoppable-domains", "NAMESPACE_B"],
    ["Unstoppable Domains", "NAMESPACE_B"],
    ["ENS", "NAMESPACE_C"],
    ["ens", "NAMESPACE_C"],
    ["SNS", "NAMESPACE_D"],
    ["sns", "NAMESPACE_D"],
    ["", null],
    ["NAMESPACE_E", null],
    ["NAMESPACE", null],
    ["DNS", null],
    ["ENS2", null],
    ["__proto__", null],
    ["hasOwnProperty", null],
  ])("%j → %s", (input, expected) => {
    expect(findProvider(input)).toBe(expected);
  });
});

describe("providers", () => {
  it("has exactly the wire values of the spec, in tie-break order", () => {
    expect(PROVIDER_ORDER).toEqual(["NAMESPACE_A", "NAMESPACE_B", "NAMESPACE_C", "NAMESPACE_D"]);
    expect(Object.keys(PROVIDERS).sort()).toEqual([...PROVIDER_ORDER].sort());
  });

  it("maps each provider to its protocol and back", () => {
    expect(PROVIDER_ORDER.map((p) => PROVIDERS[p].protocol)).toEqual(["FNS", "UNS", "ENS", "SNS"]);
    for (const p of PROVIDER_ORDER) expect(providerOfProtocol(PROVIDERS[p].protocol)).toBe(p);
  });

  it("lists the active (provider, network) pairs of docs/chain-facts.md", () => {
    expect(activePairs().map(({ provider, network }) => `${provider}/${network}`)).toEqual([
      "NAMESPACE_A/POLYGON",
      "NAMESPACE_A/BSC",
      "NAMESPACE_A/AURORA",
      "NAMESPACE_B/ETHEREUM",
      "NAMESPACE_B/POLYGON",
      "NAMESPACE_C/ETHEREUM",
      "NAMESPACE_D/SOLANA",
    ]);
    expect(PROVIDERS.NAMESPACE_D.comingSoon).toBe(false);
  });

  it("accepts only exact wire values in isProvider", () => {
    expect(isProvider("NAMESPACE_A")).toBe(true);
    expect(isProvider("namespace_a")).toBe(false);
    expect(isProvider("FNS")).toBe(false);
    expect(isProvider("toString")).toBe(false);
  });
});
