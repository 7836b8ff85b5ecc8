// The web console in Chromium (helpers/browser.ts) when things go wrong, signed out, and on a
// phone: a CSRF refusal, a session that ends mid-edit (the draft kept), an expired reset link, a
// 429 after ten wrong passwords; every signed-out page without a console error; the header at
// 390 px. Screenshots 21–25 of docs/console.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin } from "../../src/cli/admin.command.js";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type BrowserHarness, hasChromium, linkOf, startBrowserHarness } from "./helpers/browser.js";
import { type ConsoleTestApp, PASSWORD } from "./helpers/console-app.js";

describe.skipIf(!hasChromium)("the web console in Chromium: failures, signed out, on a phone", () => {
  let h: BrowserHarness;
  let t: ConsoleTestApp;
  let base: string;
  let owner: { id: number; email: string };
  let project: { id: number; name: string };
  beforeAll(async () => {
    h = await startBrowserHarness();
    ({ t, base } = h);
    owner = await createAccount(t, "ada-failures");
    project = await createProject(t, [{ id: owner.id, role: "owner" }]);
  }, 300_000);
  afterAll(async () => {
    await h?.close();
  });
  const newPage = (viewport?: { width: number; height: number }) => h.newPage(viewport);
  const settled = (page: Page) => h.settled(page);
  const shot = (page: Page, name: string, provoked?: RegExp) => h.shot(page, name, provoked);
  const expectNoConsoleErrors = (page: Page, name: string, provoked?: RegExp) =>
    h.expectNoConsoleErrors(page, name, provoked);
  const signIn = (page: Page, email: string, password = PASSWORD) => h.signIn(page, email, password);

  it("shows the failures a person meets: CSRF refusal, a session ending mid-edit, an expired link, a 429", async () => {
    const page = await newPage();
    await page.goto(`${base}/console/projects/${project.id}/collisions`);
    // Signed out: sign in first, and come back to the page asked for.
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await signIn(page, owner.email);
    await page.getByRole("heading", { name: "Collision management" }).waitFor();
    expect(page.url()).toContain(`/projects/${project.id}/collisions`);

    // A write without its CSRF header is refused, and said so.
    await page.route("**/console/api/**", async (route) => {
      const headers = { ...route.request().headers() };
      delete headers["x-csrf-token"];
      await route.continue({ headers });
    });
    await page.getByRole("button", { name: "Move Unstoppable Domains up" }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText(/refused for your security/).waitFor();
    await shot(page, "21-csrf-refused", /status of 403 .*\/settings\]/);
    await page.unroute("**/console/api/**");

    // The session ends while the person edits: sign in again, back to the page, the draft kept.
    t.clock.now += 25 * 3_600_000;
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Your session has ended. Sign in to continue").waitFor();
    await shot(page, "22-session-expired", /status of 401 .*\/settings\]/);
    await signIn(page, owner.email);
    await page.getByRole("heading", { name: "Collision management" }).waitFor();
    await page.getByText("Your unsaved changes from before you signed in again are restored").waitFor();
    expect(await page.locator(".priority-name").first().textContent()).toContain("Unstoppable Domains");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved. The API applies").waitFor();

    // An expired reset link: told plainly, with the way to get a new one.
    const signedOut = await newPage();
    await signedOut.goto(`${base}/console/forgot-password`);
    await signedOut.getByLabel("E-mail address").fill(owner.email);
    await signedOut.getByRole("button", { name: "Send the link" }).click();
    await signedOut.getByText(/a reset link is on its way/).waitFor();
    const reset = await t.smtp.waitFor(owner.email, /reset/i);
    t.clock.now += 61 * 60_000;
    await signedOut.goto(linkOf(reset));
    await signedOut.getByLabel("New password").fill("a brand new passphrase for ada");
    await signedOut.getByRole("button", { name: "Set the new password" }).click();
    await signedOut.getByText("This link is invalid, already used or expired").waitFor();
    await signedOut.getByRole("link", { name: "Ask for a new link" }).waitFor();
    await shot(signedOut, "23-expired-link", /status of 400 .*\/password-reset\/confirm\]/);

    // Too many failed sign-ins for an address: a 429 with the time to wait.
    await signedOut.goto(`${base}/console/sign-in`);
    const target = "someone@partner.example";
    const statuses = await signedOut.evaluate(async (email) => {
      const { data } = await (await fetch("/console/api/csrf")).json();
      const out: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await fetch("/console/api/auth/login", {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": data.csrfToken },
          body: JSON.stringify({ email, password: `wrong password ${i}` }),
        });
        out.push(res.status);
      }
      return out;
    }, target);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThan(0);
    await signIn(signedOut, target, "one more guess");
    await signedOut
      .getByText(/Too many attempts\. For your security, please wait \d+ (minutes?|seconds?)/)
      .waitFor();
    // 401s of the guesses, the 429; and one 403: the guesses' own GET /csrf replaced the page's
    // pre-session cookie, so the page's token is refused once and fetched again.
    await shot(signedOut, "24-too-many-attempts", /status of (401|403|429) .*\/auth\/login\]/);
  }, 180_000);

  it("prints no console error on a signed-out page, and fits the header on a phone (390 px)", async () => {
    const page = await newPage({ width: 390, height: 844 });

    // Signed out: the session probe as each page loads is an answer, not a failed request.
    const out: string[] = [];
    const invited = "phone@partner.example";
    await runAdmin(t.ctx, ["invite", invited], { out: (x) => out.push(x), err: (x) => out.push(x) });
    const invitation = new URL(linkOf(await t.smtp.waitFor(invited, /invitation/i)));
    const pages = [
      ["sign-in", "Sign in"],
      ["register", "Accept your invitation"],
      [`register${invitation.search}`, "Create your account"],
      ["forgot-password", "Reset your password"],
      ["reset-password", "Choose a new password"],
      ["verify-email", "Verify your e-mail address"],
      ["no-such-page", "Page not found"],
    ] as const;
    for (const [path, heading] of pages) {
      await page.goto(`${base}/console/${path}`);
      await page.getByRole("heading", { name: heading }).waitFor();
      await settled(page);
      await page.waitForLoadState("networkidle");
      expectNoConsoleErrors(page, `signed out: /console/${path}`);
    }

    // Signed in on a phone: the whole header is on screen, the page does not scroll sideways.
    await page.goto(`${base}/console/sign-in`);
    await signIn(page, owner.email);
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await page.goto(`${base}/console/projects/${project.id}`);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const fits = async () =>
      page.evaluate(() => {
        const right = (sel: string) => document.querySelector(sel)?.getBoundingClientRect().right ?? Infinity;
        return {
          pageWidth: document.documentElement.scrollWidth,
          headerWidth: document.querySelector(".topbar")!.scrollWidth,
          signOutRight: right(".topnav button"),
          accountRight: right(".whoami"),
        };
      });
    const f = await fits();
    expect(f.headerWidth, JSON.stringify(f)).toBeLessThanOrEqual(390);
    expect(f.pageWidth, JSON.stringify(f)).toBeLessThanOrEqual(390);
    expect(f.signOutRight, JSON.stringify(f)).toBeLessThanOrEqual(390);
    expect(f.accountRight, JSON.stringify(f)).toBeLessThanOrEqual(390);
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(true);
    await shot(page, "25-phone-header");
  }, 120_000);

  it("loaded every page without a CSP report, a script error or a console error", () => {
    expect(h.cspViolations).toEqual([]);
    expect(h.pageErrors).toEqual([]);
    for (const errors of h.consoleErrors.values()) expect(errors).toEqual([]);
  });
});
