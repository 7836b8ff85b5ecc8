import { describe, expect, it } from "vitest";
import { PROVIDERS } from "../domain/providers.js";
import { ADAPTERS, adapterFor, mapNativeRecords } from "./adapters.js";

describe("ADAPTERS", () => {
  it("holds one adapter per active provider, on the provider's networks", () => {
    expect(ADAPTERS.map((a) => a.provider)).toEqual([
      "NAMESPACE_A",
      "NAMESPACE_B",
      "NAMESPACE_C",
      "NAMESPACE_D",
    ]);
    for (const a of ADAPTERS) {
      expect(a.protocol).toBe(PROVIDERS[a.provider].protocol);
      expect([...a.networks]).toEqual([...PROVIDERS[a.provider].networks]);
    }
  });

  it("finds an adapter by provider", () => {
    expect(adapterFor("NAMESPACE_B")?.protocol).toBe("UNS");
    expect(adapterFor("NAMESPACE_D")?.protocol).toBe("SNS");
  });
});

describe("mapNativeRecords", () => {
  it.each([
    ["NAMESPACE_A", "token.ETH.0", "0xabc", [{ key: "token.ETH.0", value: "0xabc" }]],
    ["NAMESPACE_B", "crypto.ETH.address", "0xabc", [{ key: "token.ETH.0", value: "0xabc" }]],
    [
      "NAMESPACE_C",
      "text.url",
      "https://a.example",
      [{ key: "redirect.WEBSITE.0", value: "https://a.example" }],
    ],
    ["NAMESPACE_D", "anything", "v", [{ key: "anything", value: "v" }]],
    ["NAMESPACE_D", "SOL", "7xKX", [{ key: "token.SOL.0", value: "7xKX" }]],
    ["NAMESPACE_B", "crypto.ETH.address", "", []],
  ] as const)("%s %s", (provider, key, value, expected) => {
    expect(mapNativeRecords(provider, key, value)).toEqual(expected);
  });
});
