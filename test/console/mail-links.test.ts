import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "./helpers/accounts.js";
import {
  Agent,
  type ConsoleTestApp,
  createConsoleTestApp,
  type Mail,
  PASSWORD,
  PUBLIC_URL,
  signUp,
  uniqueEmail,
} from "./helpers/console-app.js";

const URL_IN_TEXT = /https?:\/\/[^\s'"<>)]+/g;

/** The console API call a page gives: its path and JSON body, with the placeholders filled in. */
function stepOf(page: string, fill: Record<string, string> = {}): { path: string; body: unknown } {
  const m = /-d '([^']+)' \\\n\s+(\S+)/.exec(page);
  if (!m) throw new Error(`no API call on the page:\n${page}`);
  let body = m[1];
  for (const [k, v] of Object.entries(fill)) body = body.replaceAll(k, v);
  return { path: new URL(m[2]).pathname, body: JSON.parse(body) };
}

describe("the links of the account e-mails", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const pageOf = async (link: string) => {
    expect(link.startsWith(`${PUBLIC_URL}/`), link).toBe(true);
    const res = await t.app.inject({ url: link.slice(PUBLIC_URL.length) });
    return res;
  };

  it("every link of every mail opens a page (none answers 404), and each page's steps work", async () => {
    // Invitation and verification (signUp follows them through the API), a member added, a
    // project invitation, a password reset.
    const ownerEmail = uniqueEmail("owner");
    const owner = await signUp(t, ownerEmail);
    const project = (await owner.post("projects", { name: `links ${ownerEmail}` })).json().data;
    const member = await createAccount(t, "member");
    expect(
      (await owner.post(`projects/${project.id}/members`, { email: member.email, role: "viewer" }))
        .statusCode,
    ).toBe(201);
    const invitee = uniqueEmail("invitee");
    expect(
      (await owner.post(`projects/${project.id}/members`, { email: invitee, role: "developer" })).statusCode,
    ).toBe(202);
    const anonymous = await new Agent(t.app).start();
    expect((await anonymous.post("auth/password-reset", { email: ownerEmail })).statusCode).toBe(202);
    await t.smtp.waitFor(ownerEmail, /Reset/);
    await t.smtp.waitFor(member.email, /added/);
    await t.smtp.waitFor(invitee, /invited/);

    const kinds = new Set<string>();
    for (const mail of t.smtp.mails as Mail[]) {
      const links = mail.text.match(URL_IN_TEXT) ?? [];
      expect(links.length, mail.subject).toBeGreaterThan(0);
      expect(mail.text, mail.subject).toMatch(/web console is not available yet/);
      for (const link of links) {
        const res = await pageOf(link);
        expect(res.statusCode, link).toBe(200);
        expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
        expect(res.headers["cache-control"]).toBe("no-store");
        expect(res.headers["referrer-policy"]).toBe("no-referrer");
        const token = new URL(link).searchParams.get("token");
        if (token !== null) expect(res.body, link).toContain(`"${token}"`);
        kinds.add(new URL(link).pathname.replace(/\d+$/, ":id"));
      }
    }
    expect([...kinds].sort()).toEqual([
      "/console/projects/:id",
      "/console/register",
      "/console/reset-password",
      "/console/verify-email",
    ]);

    // The reset page's call, as written, sets the new password.
    const resetMail = await t.smtp.waitFor(ownerEmail, /Reset/);
    const resetPage = (await pageOf(resetMail.text.match(URL_IN_TEXT)![0])).body;
    const newPassword = `${PASSWORD} again`;
    const reset = stepOf(resetPage, { YOUR_NEW_PASSWORD: newPassword });
    const browser = await new Agent(t.app).start();
    expect((await browser.request("POST", reset.path, reset.body)).statusCode).toBe(200);
    expect((await browser.post("auth/login", { email: ownerEmail, password: newPassword })).statusCode).toBe(
      200,
    );

    // The invitation page's calls, as written, register the invitee; the verification page's verify.
    const inviteMail = await t.smtp.waitFor(invitee, /invited/);
    const registerPage = (await pageOf(inviteMail.text.match(URL_IN_TEXT)![0])).body;
    const register = stepOf(registerPage, { "you@example.com": invitee, YOUR_PASSWORD: PASSWORD });
    const newcomer = await new Agent(t.app).start();
    expect((await newcomer.request("POST", register.path, register.body)).statusCode).toBe(201);
    const verifyMail = await t.smtp.waitFor(invitee, /Verify/);
    const verify = stepOf((await pageOf(verifyMail.text.match(URL_IN_TEXT)![0])).body);
    expect((await newcomer.request("POST", verify.path, verify.body)).statusCode).toBe(200);
    expect((await newcomer.post("auth/login", { email: invitee, password: PASSWORD })).statusCode).toBe(200);
  });

  it.each([
    "/console/register",
    "/console/register?token=short",
    "/console/verify-email?token=%3Cscript%3E",
    "/console/reset-password?token=",
  ])("says a damaged link is incomplete, and echoes nothing of it: %s", async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/This link is incomplete/);
    expect(res.body).not.toMatch(/script|short/);
  });

  it("serves the console's home page with the sign-in steps", async () => {
    const res = await t.app.inject({ url: "/console" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(`${PUBLIC_URL}/console/api/auth/login`);
  });
});
