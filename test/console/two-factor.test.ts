// Two-factor sign-in over the real console API and store, on SQLite and PostgreSQL: enrolment,
// the sign-in's second step with a code and a recovery code, refusals (wrong, replayed, past
// window, wrong length), the throttle counting second factors, turning it off, and the project
// rule that stops members without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRecoveryCode, TOTP_PERIOD_S, totpCode } from "../../src/accounts/two-factor.js";
import { rawDb } from "../helpers/raw-db.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { createProject, signedIn } from "./helpers/accounts.js";
import { Agent, type ConsoleTestApp, createConsoleTestApp, PASSWORD } from "./helpers/console-app.js";

const STEP_MS = TOTP_PERIOD_S * 1000;

describe.each(STORE_BACKENDS.map((b) => b.name as "sqlite" | "postgres"))(
  "two-factor sign-in (%s)",
  (backend) => {
    let t: ConsoleTestApp;
    beforeAll(async () => {
      t = await createConsoleTestApp({ backend });
    });
    afterAll(async () => {
      await t?.close();
    });

    /** A signed-in account with two-factor sign-in on: its secret and recovery codes. */
    async function enrolled(tag: string) {
      const a = await signedIn(t, tag);
      const setup = await a.agent.post("account/two-factor/setup");
      expect(setup.statusCode, setup.body).toBe(200);
      const { secret, otpauthUri, qrCode } = setup.json().data;
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(otpauthUri).toContain(`secret=${secret}`);
      expect(qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
      const confirm = await a.agent.post("account/two-factor/confirm", {
        code: totpCode(secret, t.clock.now),
      });
      expect(confirm.statusCode, confirm.body).toBe(200);
      const { recoveryCodes } = confirm.json().data as { recoveryCodes: string[] };
      // A new step, so that the confirming code's step is behind us.
      t.clock.now += STEP_MS;
      return { ...a, secret, recoveryCodes };
    }

    async function passwordStep(email: string, agent = new Agent(t.app)) {
      await agent.start();
      const res = await agent.post("auth/login", { email, password: PASSWORD });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data).toEqual({ twoFactorRequired: true, challengeToken: expect.any(String) });
      // No session yet: the account's routes still answer 401.
      expect((await agent.get("account")).statusCode).toBe(401);
      return { agent, challengeToken: data.challengeToken as string };
    }

    it("enrols with a code of the secret, stores it encrypted, and never shows it again", async () => {
      const a = await enrolled("enrol");
      expect(a.recoveryCodes).toHaveLength(10);
      expect(new Set(a.recoveryCodes).size).toBe(10);
      for (const c of a.recoveryCodes) expect(c).toMatch(/^[2-9a-z]{5}-[2-9a-z]{5}$/);
      const status = await a.agent.get("account/two-factor");
      expect(status.json().data).toEqual({ enabled: true, pending: false, recoveryCodesLeft: 10 });
      // Set-up again is refused while it is on: the secret is not handed out a second time.
      const again = await a.agent.post("account/two-factor/setup");
      expect(again.statusCode).toBe(409);
      expect(again.body).not.toContain(a.secret);
      const db = rawDb(t.store);
      const row = await db
        .selectFrom("account_totp")
        .select("secret_enc")
        .where("account_id", "=", a.id)
        .executeTakeFirstOrThrow();
      expect(row.secret_enc).not.toContain(a.secret);
      const codes = await db
        .selectFrom("account_recovery_codes")
        .select("code_hash")
        .where("account_id", "=", a.id)
        .execute();
      expect(codes).toHaveLength(10);
      for (const c of codes) for (const plain of a.recoveryCodes) expect(c.code_hash).not.toContain(plain);
    });

    it("refuses a wrong first code, and a code of the wrong length with a field error", async () => {
      const a = await signedIn(t, "confirm-bad");
      const { secret } = (await a.agent.post("account/two-factor/setup")).json().data;
      const wrong = totpCode(secret, t.clock.now + 10 * STEP_MS);
      const res = await a.agent.post("account/two-factor/confirm", { code: wrong });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe("TWO_FACTOR_INVALID");
      for (const code of ["12345", "1234567", "", "abcdef", "12 34 5"]) {
        const r = await a.agent.post("account/two-factor/confirm", { code });
        expect(r.statusCode, code).toBe(400);
        expect(r.json().error).toMatchObject({ code: "INVALID_PARAMETER" });
        expect(r.json().error.message).toMatch(/^code: must be 6 digits/);
      }
      expect((await a.agent.get("account/two-factor")).json().data).toMatchObject({
        enabled: false,
        pending: true,
      });
    });

    it("signs in with a code; refuses the same code again and a code of a past window", async () => {
      const a = await enrolled("code");
      const first = await passwordStep(a.email);
      const code = totpCode(a.secret, t.clock.now);
      const ok = await first.agent.post("auth/login/two-factor", {
        challengeToken: first.challengeToken,
        code,
      });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().data.account.email).toBe(a.email);
      expect((await first.agent.get("account")).statusCode).toBe(200);
      // The challenge is used up.
      const reused = await first.agent.post("auth/login/two-factor", {
        challengeToken: first.challengeToken,
        code,
      });
      expect(reused.json().error.code).toBe("TOKEN_INVALID");

      // Replayed: the same code on another sign-in, within its window.
      const second = await passwordStep(a.email);
      const replay = await second.agent.post("auth/login/two-factor", {
        challengeToken: second.challengeToken,
        code,
      });
      expect(replay.statusCode).toBe(401);
      expect(replay.json().error).toMatchObject({ code: "TWO_FACTOR_INVALID" });
      expect(replay.json().error.message).toMatch(/already used/);
      // A code two steps old: outside the window of one step.
      const old = totpCode(a.secret, t.clock.now - 2 * STEP_MS);
      const past = await second.agent.post("auth/login/two-factor", {
        challengeToken: second.challengeToken,
        code: old,
      });
      expect(past.statusCode).toBe(401);
      expect(past.json().error.message).toMatch(/wrong or expired/);
      // The next step's code is fine.
      t.clock.now += STEP_MS;
      const next = await second.agent.post("auth/login/two-factor", {
        challengeToken: second.challengeToken,
        code: totpCode(a.secret, t.clock.now),
      });
      expect(next.statusCode, next.body).toBe(200);
    });

    it("signs in with a recovery code once; a used or malformed one is refused", async () => {
      const a = await enrolled("recovery");
      const [rc] = a.recoveryCodes;
      const s = await passwordStep(a.email);
      const ok = await s.agent.post("auth/login/two-factor", {
        challengeToken: s.challengeToken,
        recoveryCode: rc.toUpperCase(),
      });
      expect(ok.statusCode, ok.body).toBe(200);
      expect((await s.agent.get("account/two-factor")).json().data.recoveryCodesLeft).toBe(9);
      const again = await passwordStep(a.email);
      const used = await again.agent.post("auth/login/two-factor", {
        challengeToken: again.challengeToken,
        recoveryCode: rc,
      });
      expect(used.statusCode).toBe(401);
      expect(used.json().error.code).toBe("TWO_FACTOR_INVALID");
      for (const recoveryCode of ["short", "abcde-abcde-abcde", "00000-11111"]) {
        const r = await again.agent.post("auth/login/two-factor", {
          challengeToken: again.challengeToken,
          recoveryCode,
        });
        expect(r.statusCode, recoveryCode).toBe(400);
        expect(r.json().error.message).toMatch(/^recoveryCode: /);
      }
      expect(parseRecoveryCode(` ${rc.toUpperCase()} `)).toBe(rc.replace("-", ""));
    });

    it("answers bad second-step bodies with a 4xx, never a 5xx", async () => {
      const agent = await new Agent(t.app).start();
      const bodies: unknown[] = [
        {},
        { challengeToken: "x".repeat(201), code: "123456" },
        { challengeToken: "not a token!", code: "123456" },
        { challengeToken: "a".repeat(43) },
        { challengeToken: "a".repeat(43), code: 123456 },
        { challengeToken: "a".repeat(43), code: "1".repeat(21) },
        { challengeToken: "a".repeat(43), code: "123456", extra: "dropped" },
        "not json",
        [],
      ];
      for (const body of bodies) {
        const r = await agent.post("auth/login/two-factor", body);
        expect(r.statusCode, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
        expect(r.statusCode, JSON.stringify(body)).toBeLessThan(500);
      }
    });

    it("answers bad bodies of the account's and the project's two-factor routes with a clear 4xx", async () => {
      const a = await signedIn(t, "hostile");
      const p = await createProject(t, [{ id: a.id, role: "owner" }]);
      const cases: Array<[string, string, unknown, number, string]> = [
        ["POST", "account/two-factor/confirm", {}, 400, "MISSING_PARAMETER"],
        ["POST", "account/two-factor/confirm", { code: { a: 1 } }, 400, "INVALID_PARAMETER"],
        ["POST", "account/two-factor/confirm", { code: "1".repeat(21) }, 400, "PARAMETER_TOO_LONG"],
        ["POST", "account/two-factor/confirm", { code: "123456" }, 409, "CONFLICT"], // nothing set up
        ["POST", "account/two-factor/disable", {}, 400, "MISSING_PARAMETER"],
        [
          "POST",
          "account/two-factor/disable",
          { password: "x".repeat(1025), code: "123456" },
          400,
          "PARAMETER_TOO_LONG",
        ],
        [
          "POST",
          "account/two-factor/disable",
          { password: PASSWORD, code: "123456" },
          401,
          "TWO_FACTOR_INVALID",
        ],
        ["PUT", `projects/${p.id}/two-factor`, {}, 400, "MISSING_PARAMETER"],
        ["PUT", `projects/${p.id}/two-factor`, [], 400, "BAD_REQUEST"],
        ["PUT", `projects/${p.id}/two-factor`, { required: "yes" }, 400, "INVALID_PARAMETER"],
      ];
      for (const [method, path, body, status, code] of cases) {
        const r = await a.agent.request(method, path, body);
        expect(r.statusCode, `${method} ${path} ${JSON.stringify(body)}: ${r.body}`).toBe(status);
        expect(r.json().error.code).toBe(code);
      }
      // Signed out: every account route is 401, the project's 401 too.
      const anon = await new Agent(t.app).start();
      for (const path of ["account/two-factor", `projects/${p.id}/two-factor`])
        expect((await anon.get(path)).statusCode).toBe(401);
      expect((await anon.post("account/two-factor/setup")).statusCode).toBe(401);
    });

    it("counts wrong second factors in the sign-in throttle, even with the right password", async () => {
      const a = await enrolled("throttle");
      const s = await passwordStep(a.email);
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) {
        const code = totpCode(a.secret, t.clock.now + (20 + i) * STEP_MS); // valid codes of other times
        const r = await s.agent.post("auth/login/two-factor", { challengeToken: s.challengeToken, code });
        statuses.push(r.statusCode);
      }
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses[10]).toBe(429);
      // The right code is refused too while blocked, and so is the password step.
      const right = await s.agent.post("auth/login/two-factor", {
        challengeToken: s.challengeToken,
        code: totpCode(a.secret, t.clock.now),
      });
      expect(right.statusCode).toBe(429);
      const again = await (await new Agent(t.app).start()).post("auth/login", {
        email: a.email,
        password: PASSWORD,
      });
      expect(again.statusCode).toBe(429);
    });

    it("turns off with the password and a code; then the password alone signs in", async () => {
      const a = await enrolled("disable");
      const wrongPassword = await a.agent.post("account/two-factor/disable", {
        password: "not it",
        code: totpCode(a.secret, t.clock.now),
      });
      expect(wrongPassword.statusCode).toBe(401);
      const noFactor = await a.agent.post("account/two-factor/disable", { password: PASSWORD });
      expect(noFactor.statusCode).toBe(400);
      const off = await a.agent.post("account/two-factor/disable", {
        password: PASSWORD,
        code: totpCode(a.secret, t.clock.now),
      });
      expect(off.statusCode, off.body).toBe(200);
      const login = await (await new Agent(t.app).start()).post("auth/login", {
        email: a.email,
        password: PASSWORD,
      });
      expect(login.json().data.account.email).toBe(a.email);
    });

    it("stops a member without two factors from a project that requires them, until they enrol", async () => {
      const owner = await enrolled("rule-owner");
      const member = await signedIn(t, "rule-member");
      const plain = await signedIn(t, "rule-plain-admin");
      const p = await createProject(t, [
        { id: owner.id, role: "owner" },
        { id: member.id, role: "developer" },
        { id: plain.id, role: "admin" },
      ]);
      // An admin without two factors cannot require them (they would be stopped at once).
      const self = await plain.agent.put(`projects/${p.id}/two-factor`, { required: true });
      expect(self.statusCode).toBe(403);
      expect(self.json().error.code).toBe("TWO_FACTOR_REQUIRED");
      // A developer may not change the rule at all.
      expect((await member.agent.put(`projects/${p.id}/two-factor`, { required: true })).statusCode).toBe(
        403,
      );
      const bad = await owner.agent.put(`projects/${p.id}/two-factor`, { required: "yes" });
      expect(bad.statusCode).toBe(400);
      const on = await owner.agent.put(`projects/${p.id}/two-factor`, { required: true });
      expect(on.json().data).toEqual({ required: true });
      expect((await owner.agent.get(`projects/${p.id}/two-factor`)).json().data).toEqual({ required: true });
      expect((await owner.agent.get(`projects/${p.id}`)).statusCode).toBe(200);

      for (const path of [`projects/${p.id}`, `projects/${p.id}/keys`, `projects/${p.id}/settings`]) {
        const r = await member.agent.get(path);
        expect(r.statusCode, path).toBe(403);
        expect(r.json().error.code).toBe("TWO_FACTOR_REQUIRED");
      }
      // The member enrols, and sees the project.
      const { secret } = (await member.agent.post("account/two-factor/setup")).json().data;
      await member.agent.post("account/two-factor/confirm", { code: totpCode(secret, t.clock.now) });
      expect((await member.agent.get(`projects/${p.id}`)).statusCode).toBe(200);
      // Leaving stays possible for one who is stopped.
      const leave = await plain.agent.post(`projects/${p.id}/leave`);
      expect(leave.statusCode, leave.body).toBe(200);
    });
  },
);
