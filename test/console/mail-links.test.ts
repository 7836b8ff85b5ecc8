import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
/** The console API call a text page gives: its path and JSON body, with the placeholders filled in. */
function stepOf(page: string, fill: Record<string, string> = {}): { path: string; body: unknown } {
  const m = /-d '([^']+)' \\\n\s+(\S+)/.exec(page);
  if (!m) throw new Error(`no API call on the page:\n${page}`);
  let body = m[1];
  for (const [k, v] of Object.entries(fill)) body = body.replaceAll(k, v);
  return { path: new URL(m[2]).pathname, body: JSON.parse(body) };
}

const INDEX_HTML =
  '<!doctype html><title>omniname console</title><script type="module" src="/console/assets/app.js"></script>';

/**
 * Sends one mail of every kind: invitation and verification (signUp follows them through the API),
 * a member added, a project invitation, a password reset.
 */
async function sendEveryMail(t: ConsoleTestApp): Promise<{ ownerEmail: string; invitee: string }> {
  const ownerEmail = uniqueEmail("owner");
  const owner = await signUp(t, ownerEmail);
  const project = (await owner.post("projects", { name: `links ${ownerEmail}` })).json().data;
  const member = await createAccount(t, "member");
  expect(
    (await owner.post(`projects/${project.id}/members`, { email: member.email, role: "viewer" })).statusCode,
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
  return { ownerEmail, invitee };
}

/** Opens every link of every mail, checks each answer with `check`, returns the kinds of link seen. */
async function openEveryLink(
  t: ConsoleTestApp,
  check: (link: string, res: Awaited<ReturnType<ConsoleTestApp["app"]["inject"]>>) => void,
): Promise<string[]> {
  const kinds = new Set<string>();
  for (const mail of t.smtp.mails as Mail[]) {
    const links = mail.text.match(URL_IN_TEXT) ?? [];
    expect(links.length, mail.subject).toBeGreaterThan(0);
    expect(mail.text, mail.subject).not.toMatch(/not available yet/);
    for (const link of links) {
      expect(link.startsWith(`${PUBLIC_URL}/`), link).toBe(true);
      const res = await t.app.inject({ url: link.slice(PUBLIC_URL.length) });
      expect(res.statusCode, link).toBe(200);
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      check(link, res);
      kinds.add(new URL(link).pathname.replace(/\d+$/, ":id"));
    }
  }
  return [...kinds].sort();
}

const LINK_KINDS = [
  "/console/projects/:id",
  "/console/register",
  "/console/reset-password",
  "/console/verify-email",
];
const tokenIn = (mail: Mail) => new URL(mail.text.match(URL_IN_TEXT)![0]).searchParams.get("token")!;

describe("the links of the account e-mails, web console built (web/dist/index.html exists)", () => {
  let t: ConsoleTestApp;
  let dist: string;
  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), "omniname-mail-links-dist-"));
    mkdirSync(join(dist, "assets"));
    writeFileSync(join(dist, "index.html"), INDEX_HTML);
    t = await createConsoleTestApp({ consoleDistDir: dist });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dist, { recursive: true, force: true });
  });

  it("every link of every mail opens the web console (the SPA's index.html), and each token flow works through the console API", async () => {
    const { ownerEmail, invitee } = await sendEveryMail(t);
    const kinds = await openEveryLink(t, (_link, res) => {
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(res.headers["cache-control"]).toBe("no-cache");
      expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(res.body).toBe(INDEX_HTML);
    });
    expect(kinds).toEqual(LINK_KINDS);

    // The reset link's token sets the new password through the console API (as the page does).
    const newPassword = `${PASSWORD} again`;
    const browser = await new Agent(t.app).start();
    const resetToken = tokenIn(await t.smtp.waitFor(ownerEmail, /Reset/));
    expect(
      (await browser.post("auth/password-reset/confirm", { token: resetToken, password: newPassword }))
        .statusCode,
    ).toBe(200);
    expect((await browser.post("auth/login", { email: ownerEmail, password: newPassword })).statusCode).toBe(
      200,
    );

    // The invitation link's token registers the invitee; the verification link's token verifies.
    const inviteToken = tokenIn(await t.smtp.waitFor(invitee, /invited/));
    const newcomer = await new Agent(t.app).start();
    expect((await newcomer.get(`auth/invitation?token=${inviteToken}`)).statusCode).toBe(200);
    expect(
      (
        await newcomer.post("auth/register", {
          invitationToken: inviteToken,
          fullName: "New Comer",
          email: invitee,
          password: PASSWORD,
          acceptTerms: true,
        })
      ).statusCode,
    ).toBe(201);
    const verifyToken = tokenIn(await t.smtp.waitFor(invitee, /Verify/));
    expect((await newcomer.post("auth/verify-email", { token: verifyToken })).statusCode).toBe(200);
    expect((await newcomer.post("auth/login", { email: invitee, password: PASSWORD })).statusCode).toBe(200);
  });

  it("the console's home page is the SPA too", async () => {
    const res = await t.app.inject({ url: "/console" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(INDEX_HTML);
  });
});

describe("the links of the account e-mails, web console not built (no web/dist/index.html)", () => {
  let t: ConsoleTestApp;
  let dist: string;
  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), "omniname-mail-links-nodist-")); // empty: no index.html
    t = await createConsoleTestApp({ consoleDistDir: dist });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dist, { recursive: true, force: true });
  });
  const pageOf = async (link: string) => (await t.app.inject({ url: link.slice(PUBLIC_URL.length) })).body;

  it("every link of every mail opens a plain-text page with its token filled in, and each page's steps work", async () => {
    const { ownerEmail, invitee } = await sendEveryMail(t);
    const kinds = await openEveryLink(t, (link, res) => {
      expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["content-security-policy"]).not.toContain("script-src");
      expect(res.body).toContain("npm run build");
      expect(res.body).toContain(`${PUBLIC_URL}/console/api/`);
      const token = new URL(link).searchParams.get("token");
      if (token !== null) expect(res.body, link).toContain(`"${token}"`);
    });
    expect(kinds).toEqual(LINK_KINDS);

    // The reset page's call, as written, sets the new password.
    const resetPage = await pageOf((await t.smtp.waitFor(ownerEmail, /Reset/)).text.match(URL_IN_TEXT)![0]);
    const newPassword = `${PASSWORD} again`;
    const reset = stepOf(resetPage, { YOUR_NEW_PASSWORD: newPassword });
    const browser = await new Agent(t.app).start();
    expect((await browser.request("POST", reset.path, reset.body)).statusCode).toBe(200);
    expect((await browser.post("auth/login", { email: ownerEmail, password: newPassword })).statusCode).toBe(
      200,
    );

    // The invitation page's calls, as written, register the invitee; the verification page's verify.
    const registerPage = await pageOf((await t.smtp.waitFor(invitee, /invited/)).text.match(URL_IN_TEXT)![0]);
    const register = stepOf(registerPage, { "you@example.com": invitee, YOUR_PASSWORD: PASSWORD });
    const newcomer = await new Agent(t.app).start();
    expect((await newcomer.request("POST", register.path, register.body)).statusCode).toBe(201);
    const verifyPage = await pageOf((await t.smtp.waitFor(invitee, /Verify/)).text.match(URL_IN_TEXT)![0]);
    const verify = stepOf(verifyPage);
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
    for (const url of ["/console", "/console/"]) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toContain(`${PUBLIC_URL}/console/api/auth/login`);
    }
  });

  it("answers any other console path with the short 'not built' page, and leaves /console/api alone", async () => {
    for (const url of ["/console/projects/3/keys", "/console/settings", "/console/assets/app.js"]) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(res.body, url).toMatch(/^omniname: the web console is not built\. Run `npm run build`/);
    }
    expect((await t.app.inject({ url: "/console/api/nope" })).statusCode).toBe(404);
  });
});
