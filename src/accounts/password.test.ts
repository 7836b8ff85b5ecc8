import { describe, expect, it } from "vitest";
import { checkPasswordPolicy, hashPassword, isCommonPassword, verifyPassword } from "./password.js";

describe("password hashing", () => {
  it("hashes with scrypt at N=2^17, r=8, p=1, salted, and verifies", async () => {
    const [a, b] = await Promise.all([
      hashPassword("correct horse battery"),
      hashPassword("correct horse battery"),
    ]);
    expect(a).toMatch(/^scrypt\$17\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse battery", a)).toBe(true);
    expect(await verifyPassword("correct horse batterY", a)).toBe(false);
  });

  it.each(["", "plain", "scrypt$17$8$1$abc", "scrypt$40$8$1$c2FsdA$aGFzaA", "bcrypt$2$x$y$z$w"])(
    "never matches a malformed hash %j",
    async (h) => {
      expect(await verifyPassword("x", h)).toBe(false);
    },
  );
});

describe("checkPasswordPolicy", () => {
  it.each([
    ["short", /at least/],
    ["x".repeat(257), /at most/],
    ["me@example.test", /e-mail/],
    ["aaaaaaaaaaaa", /repetitive/],
  ])("refuses %j", (pw, msg) => {
    expect(() => checkPasswordPolicy(pw.length > 20 ? pw : pw, "me@example.test")).toThrow(msg);
  });

  it.each([
    "1234567890",
    "password12",
    "passwordpassword",
    "Password12",
    "qwertyuiop",
    "qwertyqwerty",
    "iloveyou12",
  ])("refuses the common password %j, saying why", (pw) => {
    expect(isCommonPassword(pw)).toBe(true);
    expect(() => checkPasswordPolicy(pw, "me@example.test")).toThrow(
      expect.objectContaining({
        code: "COMMON_PASSWORD",
        message: expect.stringMatching(/common and breached/),
      }),
    );
  });

  it.each(["correct horse battery staple", "k7#Vq9!pLm2x", "tangerine-otter-lamp"])(
    "does not call %j common",
    (pw) => {
      expect(isCommonPassword(pw)).toBe(false);
    },
  );

  it("accepts a passphrase", () => {
    expect(() => checkPasswordPolicy("correct horse battery staple", "me@example.test")).not.toThrow();
  });
});
