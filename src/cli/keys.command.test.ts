import { describe, expect, it } from "vitest";
import { keyLimitsOf } from "./keys.command.js";

const NOW = Date.UTC(2026, 10, 21, 12);

describe("keys create --endpoints/--networks/--providers/--expires", () => {
  it("parses comma-separated lists with aliases into canonical, ordered scopes", () => {
    expect(
      keyLimitsOf(
        {
          endpoints: "deep-resolve, resolve",
          networks: "matic,eth",
          providers: "NAMESPACE_A",
          expires: "2027-01-01T00:00:00Z",
        },
        NOW,
      ),
    ).toEqual({
      scopes: {
        endpoints: ["resolve", "deep-resolve"],
        networks: ["ETHEREUM", "POLYGON"],
        providers: ["NAMESPACE_A"],
      },
      expiresAt: Date.UTC(2027, 0, 1),
    });
  });

  it("leaves a key without options unlimited and never expiring", () => {
    expect(keyLimitsOf({ name: "ci" }, NOW)).toEqual({ scopes: {}, expiresAt: null });
  });

  const bad: Array<[string, Record<string, string | true>, RegExp]> = [
    ["an expiry in the past", { expires: "2020-01-01T00:00:00Z" }, /option --expires is in the past/],
    ["an expiry that is not a time", { expires: "tomorrow" }, /option --expires must be an ISO 8601/],
    ["--expires without a value", { expires: true }, /option --expires must be an ISO 8601/],
    ["an unknown endpoint", { endpoints: "resolve,mint" }, /option --endpoints names "mint"/],
    ["an unknown network", { networks: "DOGECHAIN" }, /option --networks names "DOGECHAIN"/],
    ["an unknown provider", { providers: "NAMESPACE_Z" }, /option --providers names "NAMESPACE_Z"/],
    ["an empty list", { endpoints: true }, /option --endpoints is empty/],
    ["an overlong list", { networks: Array(40).fill("POLYGON").join(",") }, /option --networks has 40 items/],
    ["a hostile value", { endpoints: "$(rm -rf /)" }, /option --endpoints names a value/],
  ];
  for (const [label, options, message] of bad) {
    it(`refuses ${label} with INVALID_PARAMETER naming the option`, () => {
      expect(() => keyLimitsOf(options, NOW)).toThrow(message);
      try {
        keyLimitsOf(options, NOW);
      } catch (e) {
        expect((e as { code: string }).code).toBe("INVALID_PARAMETER");
      }
    });
  }
});
