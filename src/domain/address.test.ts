import { describe, expect, it } from "vitest";
import { normalizeAddress, normalizeWalletAddress } from "./address.js";

describe("normalizeWalletAddress", () => {
  it.each([
    [
      "an EVM address in any case, lower-cased",
      "0XF39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    ],
    [
      "a Solana address kept as given (base58 is case-sensitive)",
      "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
      "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
    ],
    [
      "a Solana address trimmed",
      "  So11111111111111111111111111111111111111112 ",
      "So11111111111111111111111111111111111111112",
    ],
    [
      "the same letters upper-cased (base58 is case-sensitive: here not 32 bytes)",
      "7XKXTG2CW87D97TXJSDPBD5JBKHETQA83TZRUJOSGASU",
      null,
    ],
    ["base58 of 33 bytes", "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsUU", null],
    ["a character outside base58 (0)", "0xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", null],
    ["too short", "7xKXtg2CW87d97", null],
    ["a name", "alice.sol", null],
  ])("%s", (_label, input, expected) => {
    expect(normalizeWalletAddress(input)).toBe(expected);
  });

  it("leaves the EVM-only normalizer refusing base58", () => {
    expect(normalizeAddress("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU")).toBeNull();
  });
});
