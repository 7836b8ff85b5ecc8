import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passwordStrength } from "../../src/accounts/password.js";
import {
  Agent,
  type ConsoleTestApp,
  createConsoleTestApp,
  PASSWORD,
  uniqueEmail,
} from "./helpers/console-app.js";

describe("password strength (rules of registration)", () => {
  it("scores refused passwords 0 with the code registration would give", () => {
    expect(passwordStrength("")).toMatchObject({ score: 0, acceptable: false, code: "TOO_SHORT" });
    expect(passwordStrength("abc12")).toMatchObject({ score: 0, acceptable: false, code: "TOO_SHORT" });
    expect(passwordStrength("password123")).toMatchObject({ score: 0, code: "COMMON_PASSWORD" });
    expect(passwordStrength("QwertyQwerty")).toMatchObject({ score: 0, code: "COMMON_PASSWORD" });
    expect(passwordStrength("aaaaaaaaaaab")).toMatchObject({ score: 0, code: "WEAK_PASSWORD" });
    expect(passwordStrength("x".repeat(10) + "yz".repeat(130))).toMatchObject({ code: "WEAK_PASSWORD" });
    const email = "someone.long@example.test";
    expect(passwordStrength(email, email)).toMatchObject({ score: 0, code: "WEAK_PASSWORD" });
    expect(passwordStrength(email)).toMatchObject({ acceptable: true });
  });

  it("scores accepted passwords 1 to 4, weak patterns lower", () => {
    const s = (p: string) => passwordStrength(p).score;
    expect(s("abcdefghijk")).toBe(1); // a run
    expect(s("Password123!")).toBeLessThanOrEqual(2); // a common word and a run
    expect(s(PASSWORD)).toBe(4);
    expect(s("g7Hq!pL2mZ9w")).toBe(4);
    for (const p of ["abcdefghijk", "Password123!", PASSWORD, "g7Hq!pL2mZ9w", "sunshine2024"]) {
      const r = passwordStrength(p);
      expect(r.acceptable, p).toBe(true);
      expect(r.code, p).toBeNull();
      expect(r.hint.length, p).toBeGreaterThan(5);
    }
  });
});

describe("POST /console/api/auth/password-strength", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp({ services: { throttle: { strengthChecksPerIpPerMinute: 5 } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers without a session (with the pre-session CSRF token), never logs the password", async () => {
    const agent = await new Agent(t.app, "10.1.1.1").start();
    const secret = "unique-Secret-Phrase-7731";
    const res = await agent.post("auth/password-strength", { password: secret, email: uniqueEmail("s") });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      score: 4,
      acceptable: true,
      code: null,
      hint: "A very strong password.",
    });
    const weak = await agent.post("auth/password-strength", { password: "letmein" });
    expect(weak.json().data).toMatchObject({ score: 0, acceptable: false, code: "TOO_SHORT" });
    expect(t.logs.join("\n")).not.toContain(secret);
    expect(res.headers["cache-control"]).toBe("no-store");
  });

  it("needs the CSRF token like every POST", async () => {
    const agent = new Agent(t.app, "10.1.1.2");
    const res = await agent.post("auth/password-strength", { password: PASSWORD });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe("CSRF_REJECTED");
  });

  it("refuses a missing, mistyped or oversized password with a clear 400", async () => {
    const agent = await new Agent(t.app, "10.1.1.3").start();
    const missing = await agent.post("auth/password-strength", {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatchObject({ code: "MISSING_PARAMETER" });
    expect(missing.json().error.message).toContain('"password"');
    const typed = await agent.post("auth/password-strength", { password: { a: 1 } });
    expect(typed.json().error.code).toBe("INVALID_PARAMETER");
    const long = await agent.post("auth/password-strength", { password: "x".repeat(2000) });
    expect(long.json().error.code).toBe("PARAMETER_TOO_LONG");
  });

  it("is rate-limited per IP: 429 TOO_MANY_ATTEMPTS with Retry-After", async () => {
    const agent = await new Agent(t.app, "10.1.1.4").start();
    for (let i = 0; i < 5; i++) {
      const ok = await agent.post("auth/password-strength", { password: `attempt number ${i}` });
      expect(ok.statusCode).toBe(200);
    }
    const refused = await agent.post("auth/password-strength", { password: "one too many" });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe("TOO_MANY_ATTEMPTS");
    expect(refused.json().error.message).toMatch(/password checks/);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    // Another address is not affected.
    const other = await new Agent(t.app, "10.1.1.5").start();
    expect((await other.post("auth/password-strength", { password: PASSWORD })).statusCode).toBe(200);
  });
});
