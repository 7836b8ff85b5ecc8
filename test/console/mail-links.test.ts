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
const INDEX_HTML =
  '<!doctype html><title>omniname console</title><script type="module" src="/console/assets/app.js"></script>';

describe("the links of the account e-mails", () => {
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

  const pageOf = async (link: string) => {
    expect(link.startsWith(`${PUBLIC_URL}/`), link).toBe(true);
    return t.app.inject({ url: link.slice(PUBLIC_URL.length) });
  };
  const tokenIn = (mail: Mail) => new URL(mail.text.match(URL_IN_TEXT)![0]).searchParams.get("token")!;

  it("every link of every mail opens the web console (the SPA's index.html), and each token flow works through the console API", async () => {
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
      expect(mail.text, mail.subject).not.toMatch(/not available yet/);
      for (const link of links) {
        const res = await pageOf(link);
        expect(res.statusCode, link).toBe(200);
        expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
        expect(res.headers["cache-control"]).toBe("no-cache");
        expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
        expect(res.headers["referrer-policy"]).toBe("no-referrer");
        expect(res.body).toBe(INDEX_HTML);
        kinds.add(new URL(link).pathname.replace(/\d+$/, ":id"));
      }
    }
    expect([...kinds].sort()).toEqual([
      "/console/projects/:id",
      "/console/register",
      "/console/reset-password",
      "/console/verify-email",
    ]);

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
    const preview = await newcomer.get(`auth/invitation?token=${inviteToken}`);
    expect(preview.statusCode).toBe(200);
    expect(preview.json().data).toEqual({
      email: invitee,
      project: { id: project.id, name: project.name },
      role: "developer",
      invitedBy: { fullName: expect.any(String), email: ownerEmail },
    });
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
