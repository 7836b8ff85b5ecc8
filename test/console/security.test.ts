import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESET_TTL_MINUTES, VERIFY_TTL_HOURS } from "../../src/accounts/accounts.service.js";
import { createAccount, createProject, signedIn } from "./helpers/accounts.js";
import {
  Agent,
  API,
  type ConsoleTestApp,
  createConsoleTestApp,
  PASSWORD,
  PUBLIC_URL,
  signUp,
  tokenOf,
  uniqueEmail,
  V1,
} from "./helpers/console-app.js";

describe("console security", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp({
      services: {
        throttle: {
          accountFailures: 3,
          ipFailures: 6,
          accountBlockS: 900,
          ipBlockS: 900,
          mailsPerAddressPerHour: 10,
        },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("secrets", () => {
    it("never returns or logs a key secret, a password, its hash, or a one-time token", async () => {
      const seen: LightMyRequestResponse[] = [];
      const record = async (p: Promise<LightMyRequestResponse>) => {
        const r = await p;
        seen.push(r);
        return r;
      };
      const email = uniqueEmail("secret");
      const { link } = await t.services.accounts.invite(email, { wait: true });
      const invitationToken = new URL(link).searchParams.get("token")!;
      const browser = await new Agent(t.app).start();
      await record(
        browser.post("auth/register", {
          invitationToken,
          fullName: "S",
          email,
          password: PASSWORD,
          acceptTerms: true,
        }),
      );
      const verifyToken = tokenOf(await t.smtp.waitFor(email, /Verify/));
      await record(browser.post("auth/verify-email", { token: verifyToken }));
      await record(browser.post("auth/login", { email, password: "wrong password!" }));
      await record(browser.post("auth/login", { email, password: PASSWORD }));
      const p = (await record(browser.post("projects", { name: `secrets ${email}` }))).json().data;
      const created = await record(browser.post(`projects/${p.id}/keys`, { name: "k" }));
      const secret = created.json().data.key as string;
      expect(created.headers["cache-control"]).toBe("no-store");
      await record(
        t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers: { "api-key": secret } }),
      );
      await record(
        t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers: { "api-key": `${secret}x` } }),
      );
      await record(browser.get(`projects/${p.id}/keys`));
      await record(browser.get(`projects/${p.id}`));
      await record(browser.get(`projects/${p.id}/members`));
      await record(browser.get("account"));
      const newPassword = "another long passphrase";
      await record(browser.post("account/password", { currentPassword: PASSWORD, newPassword }));
      await record(browser.post("auth/password-reset", { email }));
      const resetToken = tokenOf(await t.smtp.waitFor(email, /Reset/));
      await record(
        browser.post("auth/password-reset/confirm", { token: resetToken, password: "a third passphrase!" }),
      );
      await t.services.usage.flush();
      await t.services.accounts.drainMail();

      const row = await t.store.accounts
        .selectFrom("accounts")
        .select("password_hash")
        .where("email", "=", email)
        .executeTakeFirstOrThrow();
      expect(row.password_hash).toMatch(/^scrypt\$17\$8\$1\$/);
      const session = browser.cookies.get("omniname_session")!;
      const secrets = [
        row.password_hash,
        row.password_hash.split("$").at(-1)!,
        PASSWORD,
        newPassword,
        "a third passphrase!",
        invitationToken,
        verifyToken,
        resetToken,
        session,
      ];
      for (const r of seen) {
        // The session token travels in Set-Cookie, and only there.
        const { "set-cookie": _cookie, ...headers } = r.headers;
        const text = `${JSON.stringify(headers)} ${r.body}`;
        for (const s of secrets)
          expect(text.includes(s), `response ${r.statusCode} leaks ${s.slice(0, 8)}…`).toBe(false);
        if (r !== created)
          expect(text.includes(secret), `response ${r.statusCode} leaks the key`).toBe(false);
      }
      const logs = t.logs.join("\n");
      expect(logs.length).toBeGreaterThan(0);
      for (const s of [...secrets, secret])
        expect(logs.includes(s), `a log line leaks ${s.slice(0, 8)}…`).toBe(false);
      expect(logs).not.toMatch(/scrypt\$/);
    });
  });

  describe("one-time links", () => {
    it("uses an invitation once, and not after it expires", async () => {
      const email = uniqueEmail("inv");
      const { link } = await t.services.accounts.invite(email, { wait: true });
      const invitationToken = new URL(link).searchParams.get("token")!;
      const a = await new Agent(t.app).start();
      const body = { invitationToken, fullName: "I", email, password: PASSWORD, acceptTerms: true };
      expect((await a.post("auth/register", body)).statusCode).toBe(201);
      const again = await a.post("auth/register", { ...body, email: uniqueEmail("other") });
      expect(again.statusCode).toBe(400);
      expect(again.json().error.code).toBe("TOKEN_INVALID");
      expect((await a.get(`auth/invitation?token=${invitationToken}`)).statusCode).toBe(400);

      const late = uniqueEmail("late");
      const { link: lateLink } = await t.services.accounts.invite(late, { wait: true });
      const lateToken = new URL(lateLink).searchParams.get("token")!;
      expect((await a.get(`auth/invitation?token=${lateToken}`)).statusCode).toBe(200);
      t.clock.now += t.ctx.config.inviteTtlHours * 3_600_000 + 1;
      try {
        const expired = await a.post("auth/register", { ...body, invitationToken: lateToken, email: late });
        expect(expired.statusCode).toBe(400);
        expect(expired.json().error.code).toBe("TOKEN_INVALID");
      } finally {
        t.clock.now -= t.ctx.config.inviteTtlHours * 3_600_000 + 1;
      }
    });

    it("refuses an invitation for another address and a registration without the terms", async () => {
      const email = uniqueEmail("terms");
      const { link } = await t.services.accounts.invite(email, { wait: true });
      const invitationToken = new URL(link).searchParams.get("token")!;
      const a = await new Agent(t.app).start();
      const base = { invitationToken, fullName: "T", email, password: PASSWORD, acceptTerms: true };
      expect((await a.post("auth/register", { ...base, acceptTerms: false })).json().error.code).toBe(
        "TERMS_NOT_ACCEPTED",
      );
      expect((await a.post("auth/register", { ...base, password: "short" })).json().error.code).toBe(
        "WEAK_PASSWORD",
      );
      expect((await a.post("auth/register", { ...base, email: uniqueEmail("x") })).json().error.code).toBe(
        "TOKEN_INVALID",
      );
      for (const password of ["1234567890", "password12", "passwordpassword"]) {
        const common = await a.post("auth/register", { ...base, password });
        expect(common.statusCode, password).toBe(400);
        expect(common.json().error, password).toEqual({
          code: "COMMON_PASSWORD",
          message: expect.stringMatching(/list of common and breached passwords/),
        });
      }
      // None of those used the invitation up.
      expect((await a.post("auth/register", base)).statusCode).toBe(201);
    });

    it("uses a reset link once, voids older links, and not after it expires", async () => {
      const { email } = await createAccount(t, "reset");
      const a = await new Agent(t.app).start();
      const first = t.smtp.mails.length;
      expect((await a.post("auth/password-reset", { email })).statusCode).toBe(202);
      const old = tokenOf(await t.smtp.waitFor(email, /Reset/, first));
      const second = t.smtp.mails.length;
      await a.post("auth/password-reset", { email });
      const token = tokenOf(await t.smtp.waitFor(email, /Reset/, second));
      expect(token).not.toBe(old);
      expect(
        (await a.post("auth/password-reset/confirm", { token: old, password: "new passphrase 1" }))
          .statusCode,
      ).toBe(400);
      expect(
        (await a.post("auth/password-reset/confirm", { token, password: "new passphrase 1" })).statusCode,
      ).toBe(200);
      const reuse = await a.post("auth/password-reset/confirm", { token, password: "new passphrase 2" });
      expect(reuse.statusCode).toBe(400);
      expect(reuse.json().error.code).toBe("TOKEN_INVALID");
      expect((await a.post("auth/login", { email, password: "new passphrase 1" })).statusCode).toBe(200);

      const third = t.smtp.mails.length;
      await a.post("auth/password-reset", { email });
      const late = tokenOf(await t.smtp.waitFor(email, /Reset/, third));
      t.clock.now += RESET_TTL_MINUTES * 60_000 + 1;
      try {
        expect(
          (await a.post("auth/password-reset/confirm", { token: late, password: "new passphrase 3" }))
            .statusCode,
        ).toBe(400);
      } finally {
        t.clock.now -= RESET_TTL_MINUTES * 60_000 + 1;
      }
    });

    it("uses a verification link once, and not after it expires", async () => {
      const email = uniqueEmail("verify");
      const { link } = await t.services.accounts.invite(email, { wait: true });
      const a = await new Agent(t.app).start();
      const invitationToken = new URL(link).searchParams.get("token")!;
      await a.post("auth/register", {
        invitationToken,
        fullName: "V",
        email,
        password: PASSWORD,
        acceptTerms: true,
      });
      const token = tokenOf(await t.smtp.waitFor(email, /Verify/));
      t.clock.now += VERIFY_TTL_HOURS * 3_600_000 + 1;
      try {
        expect((await a.post("auth/verify-email", { token })).statusCode).toBe(400);
      } finally {
        t.clock.now -= VERIFY_TTL_HOURS * 3_600_000 + 1;
      }
      const before = t.smtp.mails.length;
      expect((await a.post("auth/resend-verification", { email })).statusCode).toBe(202);
      const fresh = tokenOf(await t.smtp.waitFor(email, /Verify/, before));
      expect((await a.post("auth/verify-email", { token: fresh })).statusCode).toBe(200);
      expect((await a.post("auth/verify-email", { token: fresh })).statusCode).toBe(400);
    });
  });

  describe("CSRF", () => {
    it("refuses state-changing requests without the token, with a wrong one, or from another origin", async () => {
      const { email } = await createAccount(t, "csrf");
      const raw = (
        headers: Record<string, string>,
        url = `${API}/auth/login`,
        payload: object = { email, password: PASSWORD },
      ) => t.app.inject({ method: "POST", url, headers, payload });
      const noToken = await raw({});
      expect(noToken.statusCode).toBe(403);
      expect(noToken.json().error.code).toBe("CSRF_REJECTED");
      // A token without its cookie, and a cookie that the server did not sign.
      const fresh = await new Agent(t.app).start();
      expect((await raw({ "x-csrf-token": fresh.csrf! })).statusCode).toBe(403);
      expect((await raw({ "x-csrf-token": "abc.def", cookie: "omniname_csrf=abc.def" })).statusCode).toBe(
        403,
      );
      // The real pair passes, but not from another origin or site.
      const cookie = `omniname_csrf=${fresh.cookies.get("omniname_csrf")}`;
      expect(
        (await raw({ "x-csrf-token": fresh.csrf!, cookie, origin: "https://evil.example" })).statusCode,
      ).toBe(403);
      expect(
        (await raw({ "x-csrf-token": fresh.csrf!, cookie, "sec-fetch-site": "cross-site" })).statusCode,
      ).toBe(403);
      const ok = await raw({
        "x-csrf-token": fresh.csrf!,
        cookie,
        origin: PUBLIC_URL,
        "sec-fetch-site": "same-origin",
      });
      expect(ok.statusCode).toBe(200);

      // Signed in: the session's own token is required; the pre-session one no longer works.
      const user = await signedIn(t, "csrf2");
      const session = `omniname_session=${user.agent.cookies.get("omniname_session")}`;
      const create = (token?: string) =>
        raw(token ? { cookie: session, "x-csrf-token": token } : { cookie: session }, `${API}/projects`, {
          name: `csrf ${user.email}`,
        });
      expect((await create()).statusCode).toBe(403);
      expect((await create(fresh.csrf!)).statusCode).toBe(403);
      expect((await create(user.agent.csrf!)).statusCode).toBe(201);
    });
  });

  describe("login", () => {
    it("gives the same answer for an unknown address and a wrong password", async () => {
      const { email } = await createAccount(t, "same");
      const a = await new Agent(t.app, "192.0.2.50").start();
      const unknown = await a.post("auth/login", { email: uniqueEmail("nobody"), password: PASSWORD });
      const wrong = await a.post("auth/login", { email, password: "not the password" });
      expect(unknown.statusCode).toBe(401);
      expect(unknown.body).toBe(wrong.body);
      for (const route of ["auth/password-reset", "auth/resend-verification"]) {
        const known = await a.post(route, { email });
        const other = await a.post(route, { email: uniqueEmail("ghost") });
        expect(known.statusCode).toBe(202);
        expect(known.body).toBe(other.body);
      }
    });

    it("blocks an account after repeated failures, even with the right password, and unknown addresses alike", async () => {
      const { email } = await createAccount(t, "brute");
      const a = await new Agent(t.app, "192.0.2.60").start();
      for (let i = 0; i < 3; i++)
        expect((await a.post("auth/login", { email, password: `guess ${i} xxxxxx` })).statusCode).toBe(401);
      const blocked = await a.post("auth/login", { email, password: PASSWORD });
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json().error.code).toBe("TOO_MANY_ATTEMPTS");
      expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(800);
      // From another address too: the count is per account.
      const b = await new Agent(t.app, "192.0.2.61").start();
      expect((await b.post("auth/login", { email, password: PASSWORD })).statusCode).toBe(429);

      const ghost = uniqueEmail("ghost");
      const c = await new Agent(t.app, "192.0.2.62").start();
      for (let i = 0; i < 3; i++)
        expect((await c.post("auth/login", { email: ghost, password: "whatever 123" })).statusCode).toBe(401);
      expect((await c.post("auth/login", { email: ghost, password: "whatever 123" })).statusCode).toBe(429);
    });

    it("blocks an address that sprays many accounts", async () => {
      const victim = await createAccount(t, "victim");
      const a = await new Agent(t.app, "192.0.2.70").start();
      for (let i = 0; i < 6; i++)
        await a.post("auth/login", { email: uniqueEmail(`spray${i}`), password: "password 123" });
      const blocked = await a.post("auth/login", { email: victim.email, password: PASSWORD });
      expect(blocked.statusCode).toBe(429);
      const elsewhere = await new Agent(t.app, "192.0.2.71").start();
      expect(
        (await elsewhere.post("auth/login", { email: victim.email, password: PASSWORD })).statusCode,
      ).toBe(200);
    });
  });

  describe("sessions", () => {
    it("rotates the session at login and ends the others on a password change", async () => {
      const user = await signedIn(t, "rotate");
      const first = user.agent.cookies.get("omniname_session")!;
      // Signing in again from the same browser: a new id, the old one is dead.
      expect(
        (await user.agent.post("auth/login", { email: user.email, password: PASSWORD })).statusCode,
      ).toBe(200);
      const second = user.agent.cookies.get("omniname_session")!;
      expect(second).not.toBe(first);
      const withOld = await t.app.inject({
        url: `${API}/account`,
        headers: { cookie: `omniname_session=${first}` },
      });
      expect(withOld.statusCode).toBe(401);

      const other = await new Agent(t.app).start();
      await other.post("auth/login", { email: user.email, password: PASSWORD });
      expect((await other.get("account")).statusCode).toBe(200);
      const changed = await user.agent.post("account/password", {
        currentPassword: PASSWORD,
        newPassword: "brand new passphrase",
      });
      expect(changed.statusCode).toBe(200);
      expect(user.agent.cookies.get("omniname_session")).not.toBe(second);
      expect((await user.agent.get("account")).statusCode).toBe(200);
      expect((await other.get("account")).statusCode).toBe(401);
    });

    it("expires an idle session", async () => {
      const user = await signedIn(t, "idle");
      t.clock.now += t.ctx.config.sessionIdleHours * 3_600_000 + 1;
      try {
        expect((await user.agent.get("account")).statusCode).toBe(401);
      } finally {
        t.clock.now -= t.ctx.config.sessionIdleHours * 3_600_000 + 1;
      }
    });
  });

  describe("team invitations", () => {
    it("turns an invitation for an address without an account into a membership on registration", async () => {
      const owner = await signedIn(t, "teamowner");
      const p = await createProject(t, [{ id: owner.id, role: "owner" }]);
      const email = uniqueEmail("newbie");
      const add = await owner.agent.post(`projects/${p.id}/members`, { email, role: "developer" });
      expect(add.statusCode).toBe(202);
      expect(add.json().data.status).toBe("invited");
      const members = (await owner.agent.get(`projects/${p.id}/members`)).json().data;
      expect(members.invitations.map((i: { email: string }) => i.email)).toEqual([email]);
      const mail = await t.smtp.waitFor(email, new RegExp(p.name));
      const newbie = await new Agent(t.app).start();
      const reg = await newbie.post("auth/register", {
        invitationToken: tokenOf(mail),
        fullName: "New Bie",
        email,
        password: PASSWORD,
        acceptTerms: true,
      });
      expect(reg.statusCode).toBe(201);
      await newbie.post("auth/verify-email", { token: tokenOf(await t.smtp.waitFor(email, /Verify/)) });
      await newbie.post("auth/login", { email, password: PASSWORD });
      const list = (await newbie.get("projects")).json().data;
      expect(list).toEqual([expect.objectContaining({ id: p.id, role: "developer" })]);
      // An existing account is added at once.
      const existing = await createAccount(t, "existing");
      const direct = await owner.agent.post(`projects/${p.id}/members`, {
        email: existing.email,
        role: "viewer",
      });
      expect(direct.statusCode).toBe(201);
      expect(direct.json().data.member).toMatchObject({ accountId: existing.id, role: "viewer" });
    });

    it("signs up end to end through the helper (sanity of the shared flow)", async () => {
      const agent = await signUp(t, uniqueEmail("flow"));
      expect((await agent.get("account")).statusCode).toBe(200);
    });
  });
});
