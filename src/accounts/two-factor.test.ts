import { describe, expect, it } from "vitest";
import {
  decryptTotpSecret,
  encryptTotpSecret,
  hashRecoveryCode,
  newRecoveryCodes,
  newTotpSecret,
  parseRecoveryCode,
  parseTotpCode,
  TOTP_PERIOD_S,
  totpCode,
  totpStepOf,
} from "./two-factor.js";

const STEP = TOTP_PERIOD_S * 1000;
// RFC 6238 appendix B: the SHA-1 secret "12345678901234567890" (base32 below), 8 digits there;
// its last 6 digits at 59 s are 287082.
const RFC_SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

describe("TOTP", () => {
  it("matches the RFC 6238 test vector", () => {
    expect(totpCode(RFC_SECRET, 59_000)).toBe("287082");
    expect(totpCode(RFC_SECRET, 1_111_111_109_000)).toBe("081804");
  });

  const now = 1_800_000_000_000;
  const secret = newTotpSecret();
  it.each([
    ["the current step", 0, 0],
    ["the step before (a slow typist)", -1, -1],
    ["the step after (a fast clock)", 1, 1],
    ["two steps back", -2, null],
    ["two steps ahead", 2, null],
    ["ten minutes back", -20, null],
  ])("accepts or refuses a code of %s", (_label, offset, expected) => {
    const step = totpStepOf(secret, totpCode(secret, now + offset * STEP), now);
    expect(step === null ? null : step - Math.floor(now / STEP)).toBe(expected);
  });

  it.each([
    ["123456", "123456"],
    ["123 456", "123456"],
    ["123-456", "123456"],
    ["12345", null],
    ["1234567", null],
    ["", null],
    ["12345a", null],
    ["١٢٣٤٥٦", null],
  ])("reads the code %j", (input, expected) => {
    if (expected === null) expect(() => parseTotpCode(input)).toThrow(/^code: must be 6 digits/);
    else expect(parseTotpCode(input)).toBe(expected);
  });
});

describe("the secret at rest", () => {
  const pepper = "a".repeat(48);
  it("round-trips, and the stored form holds neither the secret nor a fixed IV", () => {
    const secret = newTotpSecret();
    const a = encryptTotpSecret(pepper, 7, secret);
    const b = encryptTotpSecret(pepper, 7, secret);
    expect(a).not.toContain(secret);
    expect(a).not.toBe(b);
    expect(decryptTotpSecret(pepper, 7, a)).toBe(secret);
  });
  it("refuses another account's row, another pepper and a tampered row", () => {
    const stored = encryptTotpSecret(pepper, 7, newTotpSecret());
    expect(() => decryptTotpSecret(pepper, 8, stored)).toThrow();
    expect(() => decryptTotpSecret("b".repeat(48), 7, stored)).toThrow();
    const parts = stored.split(".");
    parts[3] = `${parts[3].slice(0, -2)}AA`;
    expect(() => decryptTotpSecret(pepper, 7, parts.join("."))).toThrow();
    expect(() => decryptTotpSecret(pepper, 7, "garbage")).toThrow(/damaged/);
  });
});

describe("recovery codes", () => {
  it("are ten distinct xxxxx-xxxxx codes that parse back", () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(parseRecoveryCode(c)).toBe(c.replace("-", ""));
  });
  it.each(["", "short", "abcde-abcd", "abcde-abcde-a", "00000-11111", "abcde_abcde!"])("refuses %j", (c) => {
    expect(() => parseRecoveryCode(c)).toThrow(/^recoveryCode: /);
  });
  it("hash under the pepper and the account", () => {
    expect(hashRecoveryCode("p", 1, "abcdeabcde")).not.toBe(hashRecoveryCode("p", 2, "abcdeabcde"));
    expect(hashRecoveryCode("p", 1, "abcdeabcde")).not.toBe(hashRecoveryCode("q", 1, "abcdeabcde"));
  });
});
