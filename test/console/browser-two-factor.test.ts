// Two-factor sign-in in a real Chromium (helpers/browser.ts): a partner sets it up with a code the
// test computes from the key shown on the page, signs in with a code and with a recovery code, a
// wrong code is refused; the project is made to require it, and a member without it is stopped and
// asked to set it up first. axe on every page, no console error but the provoked ones; the
// screenshots 26–31 of docs/console.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../src/accounts/two-factor.js";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type BrowserHarness, hasChromium, startBrowserHarness } from "./helpers/browser.js";
import { type ConsoleTestApp, PASSWORD } from "./helpers/console-app.js";

describe.skipIf(!hasChromium)("two-factor sign-in in Chromium", () => {
  let h: BrowserHarness;
  let t: ConsoleTestApp;
  let base: string;
  beforeAll(async () => {
    h = await startBrowserHarness();
    ({ t, base } = h);
  }, 300_000);
  afterAll(async () => {
    await h?.close();
  });
  const newPage = () => h.newPage();
  const shot = (page: Page, name: string, provoked?: RegExp) => h.shot(page, name, provoked);
  const expectNoConsoleErrors = (page: Page, name: string, provoked?: RegExp) =>
    h.expectNoConsoleErrors(page, name, provoked);
  const signIn = (page: Page, email: string) => h.signIn(page, email, PASSWORD);

  it("turns on two-factor sign-in, signs in with a code and a recovery code, and stops a member without it", async () => {
    const owner = await createAccount(t, "ada-2fa");
    const project = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const page = await newPage();
    await page.goto(`${base}/console/sign-in`);
    await signIn(page, owner.email);
    await page.getByRole("heading", { name: "Projects" }).waitFor();

    // Enrolment: the QR code and the key; the test's "app" computes the code from the shown key.
    await page.getByRole("link", { name: "Two-factor" }).click();
    await page.getByRole("heading", { name: "Two-factor sign-in is off" }).waitFor();
    await shot(page, "26-two-factor-off");
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    await page.getByRole("img", { name: /QR code of your two-factor key/ }).waitFor();
    const secret = (await page.getByTestId("totp-secret").textContent())!.replace(/\s/g, "");
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await shot(page, "27-two-factor-qr");
    // A code of the wrong length: said next to the field.
    await page.getByLabel("Code from your app").fill("12345");
    await page.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await page.getByText("Must be 6 digits (this one has 5).").waitFor();
    expectNoConsoleErrors(page, "two-factor code too short", /status of 400 .*\/two-factor\/confirm\]/);
    await page.getByLabel("Code from your app").fill(totpCode(secret, t.clock.now));
    await page.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    const list = page.getByTestId("recovery-codes");
    await list.waitFor();
    const recoveryCodes = (await list.locator("li").allTextContents()).map((c) => c.trim());
    expect(recoveryCodes).toHaveLength(10);
    // The list's items, numbers included, do not overlap (two columns once fell on each other).
    const boxes = await list.locator("li").evaluateAll((items) =>
      items.map((li) => {
        const range = document.createRange();
        range.selectNodeContents(li);
        const r = li.getBoundingClientRect();
        return {
          left: r.left,
          right: r.right,
          top: r.top,
          bottom: r.bottom,
          text: range.getBoundingClientRect().right,
        };
      }),
    );
    for (const [i, a] of boxes.entries())
      for (const b of boxes.slice(i + 1))
        expect(
          a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top,
          `recovery codes ${JSON.stringify(a)} and ${JSON.stringify(b)} overlap`,
        ).toBe(true);
    await shot(page, "28-recovery-codes");
    await page.getByRole("button", { name: "I have stored them" }).click();
    await page.getByRole("heading", { name: "Two-factor sign-in is on" }).waitFor();
    expect(await page.getByTestId("totp-secret").count()).toBe(0);

    // The project requires two factors of its members.
    await page.goto(`${base}/console/projects/${project.id}/security`);
    await page.getByRole("switch", { name: "Require two-factor sign-in of every member" }).click();
    await page.getByText("Saved. Members without two-factor sign-in are stopped").waitFor();
    await shot(page, "29-security-two-factor");

    // Signing in now asks for a code: a wrong one is refused, the app's current one lets in.
    t.clock.now += 30_000; // the next step: the enrolment's code is spent
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(page, owner.email);
    await page.getByRole("heading", { name: "Two-factor sign-in" }).waitFor();
    // The step's one field has the focus: the code can be typed at once.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("autocomplete")))
      .toBe("one-time-code");
    await page.getByLabel("Authentication code").fill(totpCode(secret, t.clock.now + 600_000));
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByText("Wrong or expired. Enter the code your app shows now.").waitFor();
    await shot(page, "30-two-factor-wrong-code", /status of 401 .*\/auth\/login\/two-factor\]/);
    await page.getByLabel("Authentication code").fill(totpCode(secret, t.clock.now));
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    expect(page.url()).toMatch(/\/console\/projects$/); // signed out, not sent back to the last page

    // And with a recovery code, once.
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(page, owner.email);
    await page.getByRole("button", { name: "Use a recovery code instead" }).click();
    await page.getByLabel("Recovery code").fill(recoveryCodes[0]);
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await page.getByRole("link", { name: "Two-factor" }).click();
    await page.getByText(/Recovery codes left:\s*9 of 10/).waitFor();

    // Turning it off with a recovery code (a lost phone). Empty fields are said at each field,
    // before any request; a used recovery code is refused; an unused one turns it off.
    await page.getByRole("button", { name: "Turn off two-factor sign-in" }).click();
    await page.getByText("Enter your password.").waitFor();
    await page.getByText("Enter the 6-digit code your app shows now.").waitFor();
    expect(await page.locator(".field-error").allTextContents()).toEqual([
      "Enter your password.",
      "Enter the 6-digit code your app shows now.",
    ]);
    await page.getByRole("button", { name: "Lost your phone? Use a recovery code" }).click();
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Turn off two-factor sign-in" }).click();
    await page.getByText("Enter one of your recovery codes.").waitFor();
    await page.getByLabel("Recovery code").fill(recoveryCodes[0]); // spent on the sign-in above
    await page.getByRole("button", { name: "Turn off two-factor sign-in" }).click();
    await page.locator(".field-error").first().waitFor();
    expect(await page.locator(".field-error").allTextContents()).not.toContainEqual(
      expect.stringMatching(/The field|recoveryCode/),
    );
    await h.audit(page, "two-factor-off-recovery-refused");
    expectNoConsoleErrors(page, "two-factor off, spent code", /status of 40\d .*\/two-factor\/disable\]/);
    await page.getByLabel("Recovery code").fill(recoveryCodes[1]);
    // The refusal went with the code it was about.
    expect(await page.locator(".field-error").count()).toBe(0);
    await shot(page, "35-two-factor-off-with-recovery-code", /status of 40\d .*\/two-factor\/disable\]/);
    await page.getByRole("button", { name: "Turn off two-factor sign-in" }).click();
    await page.getByRole("heading", { name: "Two-factor sign-in is off" }).waitFor();
    await page.getByText("Two-factor sign-in is off.").waitFor();
    // On again for the rest of the journey (the project requires it of its members).
    await page.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    const secret2 = (await page.getByTestId("totp-secret").textContent())!.replace(/\s/g, "");
    t.clock.now += 30_000;
    await page.getByLabel("Code from your app").fill(totpCode(secret2, t.clock.now));
    await page.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await page.getByRole("button", { name: "I have stored them" }).click();

    // A member without two factors is stopped before seeing the project, and asked to enrol.
    const dev = await createAccount(t, "dev-no-2fa");
    await t.services.projects.repo.addMember(project.id, dev.id, "developer", t.clock.now);
    const member = await newPage();
    await member.goto(`${base}/console/sign-in`);
    await signIn(member, dev.email);
    await member.getByRole("link", { name: project.name }).click();
    await member.getByRole("heading", { name: "Two-factor sign-in required" }).waitFor();
    expect(await member.getByRole("link", { name: "API keys" }).count()).toBe(0);
    await shot(member, "31-two-factor-required", /status of 403 .*\/projects\/\d+\]/);
    await member.getByRole("link", { name: "Set up two-factor sign-in" }).click();
    await member.getByText("This project requires two-factor sign-in of its members").waitFor();
    await member.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    const memberSecret = (await member.getByTestId("totp-secret").textContent())!.replace(/\s/g, "");
    await member.getByLabel("Code from your app").fill(totpCode(memberSecret, t.clock.now));
    await member.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await member.getByRole("button", { name: "I have stored them" }).click();
    await member.getByRole("link", { name: "Continue to the project" }).click();
    await member.getByRole("heading", { name: "Overview" }).waitFor();
  }, 180_000);

  it("loaded every page without a CSP report, a script error or a console error", () => {
    expect(h.cspViolations).toEqual([]);
    expect(h.pageErrors).toEqual([]);
    for (const errors of h.consoleErrors.values()) expect(errors).toEqual([]);
    expect(Object.keys(h.audited)).toHaveLength(8);
  });
});
