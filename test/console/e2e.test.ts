import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Agent,
  API,
  type ConsoleTestApp,
  createConsoleTestApp,
  PASSWORD,
  tokenOf,
  uniqueEmail,
  V1,
} from "./helpers/console-app.js";

describe.each(["sqlite", "postgres"] as const)("console end to end on %s", (backend) => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("invite → register → verify e-mail → login → project → key → resolve → usage → revoke → 401", async () => {
    const email = uniqueEmail("partner");

    // The operator invites (omniname admin invite runs this), and the invitation arrives by SMTP.
    await t.services.accounts.invite(email, { wait: true });
    const invitation = await t.smtp.waitFor(email, /invitation/i);
    const invitationToken = tokenOf(invitation);

    const browser = await new Agent(t.app).start();
    const preview = await browser.get(`auth/invitation?token=${invitationToken}`);
    expect(preview.statusCode).toBe(200);
    expect(preview.json().data.email).toBe(email);

    const reg = await browser.post("auth/register", {
      invitationToken,
      fullName: "Ada Partner",
      email: email.toUpperCase(),
      password: PASSWORD,
      acceptTerms: true,
    });
    expect(reg.statusCode).toBe(201);
    expect(reg.json().data.account).toMatchObject({ email, fullName: "Ada Partner", emailVerified: false });

    // Not verified yet: the right password is refused with a clear code.
    const early = await browser.post("auth/login", { email, password: PASSWORD });
    expect(early.statusCode).toBe(403);
    expect(early.json().error.code).toBe("EMAIL_NOT_VERIFIED");

    const verifyMail = await t.smtp.waitFor(email, /Verify/);
    const verified = await browser.post("auth/verify-email", { token: tokenOf(verifyMail) });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().data.account.emailVerified).toBe(true);

    const login = await browser.post("auth/login", { email, password: PASSWORD });
    expect(login.statusCode).toBe(200);
    const cookie = String(login.headers["set-cookie"]);
    expect(cookie).toMatch(/omniname_session=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);

    const me = await browser.get("account");
    expect(me.statusCode).toBe(200);
    expect(me.json().data.account.email).toBe(email);

    const created = await browser.post("projects", {
      name: `Wallet app ${backend} ${email}`,
      description: "Our wallet",
    });
    expect(created.statusCode).toBe(201);
    const project = created.json().data;
    expect(project).toMatchObject({ role: "owner", plan: "free", description: "Our wallet" });
    // The store stamps creation with the wall clock.
    expect(Math.abs(Date.parse(project.createdAt) - Date.now())).toBeLessThan(60_000);

    const keyRes = await browser.post(`projects/${project.id}/keys`, { name: "backend" });
    expect(keyRes.statusCode).toBe(201);
    const { key, prefix } = keyRes.json().data;
    expect(key.startsWith(prefix)).toBe(true);

    const listed = await browser.get(`projects/${project.id}/keys`);
    expect(listed.json().data).toEqual([
      {
        id: keyRes.json().data.id,
        name: "backend",
        prefix,
        createdAt: keyRes.json().data.createdAt,
        lastUsedAt: null,
        status: "active",
        revokedAt: null,
        endpoints: null,
        networks: null,
        providers: null,
        expiresAt: null,
        rotatedTo: null,
        requestsThisMonth: 0,
      },
    ]);
    expect(listed.body).not.toContain(key);

    const resolved = await t.app.inject({
      url: `${V1}/resolve?domain=alice.wallet`,
      headers: { "api-key": key },
    });
    expect(resolved.statusCode).toBe(200);
    expect(resolved.json().data.domain).toBe("alice.wallet");
    expect(resolved.headers.ratelimit).toBeDefined();

    const missing = await t.app.inject({
      url: `${V1}/resolve?domain=nobody.wallet`,
      headers: { "api-key": key },
    });
    expect(missing.statusCode).toBe(404);

    const dash = await browser.get(`projects/${project.id}/dashboard`);
    expect(dash.statusCode).toBe(200);
    const d = dash.json().data;
    expect(d.days).toHaveLength(30);
    const today = d.days.at(-1);
    expect(today.day).toBe(new Date(t.clock.now).toISOString().slice(0, 10));
    expect(today.requests).toBe(2);
    expect(today.errors).toBe(1);
    expect(today.byStatus).toEqual({ "404": 1 });
    expect(today.byEndpoint.resolve.requests).toBe(2);
    expect(today.latencyMs.p50).toBeGreaterThan(0);
    expect(d.quota).toMatchObject({ limit: 1_000_000, used: 2, remaining: 999_998 });
    expect(d.totals.requests).toBe(2);

    // The key's last use reached the store with the same batch.
    const after = await browser.get(`projects/${project.id}/keys`);
    expect(after.json().data[0].lastUsedAt).toBe(new Date(t.clock.now).toISOString());

    const revoked = await browser.delete(`projects/${project.id}/keys/${keyRes.json().data.id}`);
    expect(revoked.statusCode).toBe(200);
    const refused = await t.app.inject({
      url: `${V1}/resolve?domain=alice.wallet`,
      headers: { "api-key": key },
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error.code).toBe("API_KEY_INVALID");
    expect((await browser.get(`projects/${project.id}/keys`)).json().data).toMatchObject([
      { id: keyRes.json().data.id, status: "revoked", revokedAt: new Date(t.clock.now).toISOString() },
    ]);

    const out = await browser.post("auth/logout");
    expect(out.statusCode).toBe(200);
    expect((await browser.get("account")).statusCode).toBe(401);
  });

  it("deletes a project with its keys, which stop working at once", async () => {
    const browser = await new Agent(t.app).start();
    const email = uniqueEmail("deleter");
    const { link } = await t.services.accounts.invite(email, { wait: true });
    await browser.post("auth/register", {
      invitationToken: new URL(link).searchParams.get("token"),
      fullName: "Del Eter",
      email,
      password: PASSWORD,
      acceptTerms: true,
    });
    await browser.post("auth/verify-email", { token: tokenOf(await t.smtp.waitFor(email, /Verify/)) });
    await browser.post("auth/login", { email, password: PASSWORD });
    const p = (await browser.post("projects", { name: `doomed ${backend} ${email}` })).json().data;
    const { key } = (await browser.post(`projects/${p.id}/keys`, { name: "k" })).json().data;
    expect(
      (await t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers: { "api-key": key } }))
        .statusCode,
    ).toBe(200);

    const del = await browser.delete(`projects/${p.id}`);
    expect(del.statusCode).toBe(200);
    expect(
      (await t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers: { "api-key": key } }))
        .statusCode,
    ).toBe(401);
    expect((await browser.get(`projects/${p.id}`)).statusCode).toBe(404);
    expect((await browser.get("projects")).json().data).toEqual([]);
    const rows = await t.store.accounts
      .selectFrom("api_keys")
      .select("id")
      .where("project_id", "=", p.id)
      .execute();
    expect(rows).toEqual([]);
  });

  it("applies resolution settings written through the console to the next v1 request", async () => {
    const browser = await new Agent(t.app).start();
    const email = uniqueEmail("settings");
    const { link } = await t.services.accounts.invite(email, { wait: true });
    await browser.post("auth/register", {
      invitationToken: new URL(link).searchParams.get("token"),
      fullName: "Set Tings",
      email,
      password: PASSWORD,
      acceptTerms: true,
    });
    await browser.post("auth/verify-email", { token: tokenOf(await t.smtp.waitFor(email, /Verify/)) });
    await browser.post("auth/login", { email, password: PASSWORD });
    const p = (await browser.post("projects", { name: `settings ${backend} ${email}` })).json().data;
    const { key } = (await browser.post(`projects/${p.id}/keys`, { name: "k" })).json().data;
    const resolve = () =>
      t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers: { "api-key": key } });
    expect((await resolve()).statusCode).toBe(200);
    const put = await browser.put(`projects/${p.id}/settings`, { providers: { disabled: ["FNS"] } });
    expect(put.json().data).toEqual({ providers: { disabled: ["NAMESPACE_A"] } });
    // alice.wallet exists only on NAMESPACE_A: disabled, it is gone at once.
    expect((await resolve()).statusCode).toBe(404);
    await browser.put(`projects/${p.id}/settings`, {});
    expect((await resolve()).statusCode).toBe(200);
  });

  it("answers under /console/api with the error envelope", async () => {
    const res = await t.app.inject({ url: `${API}/projects` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      result: false,
      error: { code: "UNAUTHENTICATED", message: "Sign in first." },
    });
  });
});
