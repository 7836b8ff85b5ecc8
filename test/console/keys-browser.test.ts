// API keys with limits of their own in a real Chromium (Debian's, via playwright-core): an owner
// creates a scoped, expiring key on the keys page and rotates another; the keys are then used on
// API v1. A scoped key is refused on another endpoint, an expired key is refused, a rotated key
// works until its overlap ends. Time moves with the server's fake clock (no sleeps). Bad input on
// the page (an expiry in the past, an overlap beyond 30 days) shows the server's field error at its
// field. axe finds no violation on the page and its dialogs, and the browser logs no error but the
// 400s the test provokes.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type BrowserHarness, hasChromium, startBrowserHarness } from "./helpers/browser.js";
import { V1 } from "./helpers/console-app.js";

const MINUTE = 60_000;

/** A time as the page's datetime-local inputs take it, in the browser's own time zone. */
function localTime(page: Page, ms: number): Promise<string> {
  return page.evaluate((at) => {
    const d = new Date(at);
    const pad = (n: number) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }, ms);
}

describe.skipIf(!hasChromium)("API keys with limits in Chromium", () => {
  let h: BrowserHarness;
  beforeAll(async () => {
    h = await startBrowserHarness();
  }, 300_000);
  afterAll(async () => {
    await h?.close();
  });

  /** A v1 call with a key: the status and the error code, if any. */
  async function call(key: string, path: string): Promise<{ status: number; code: string | null }> {
    const res = await fetch(`${h.base}${V1}/${path}`, { headers: { "api-key": key } });
    const body = (await res.json()) as { error?: { code: string } };
    return { status: res.status, code: body.error?.code ?? null };
  }

  async function newSecret(page: Page): Promise<string> {
    const secret = (await page.getByTestId("new-key").textContent()) ?? "";
    expect(secret).toMatch(/^on_[0-9a-f]{8}_/);
    return secret;
  }

  it("creates a scoped, expiring key and rotates another; v1 enforces both", async () => {
    const { t } = h;
    const owner = await createAccount(t, "keys-owner");
    const p = await createProject(t, [{ id: owner.id, role: "owner" }]);
    // Tall enough for the screenshot to show the keys table under the form.
    const page = await h.newPage({ width: 1280, height: 1100 });
    await page.goto(`${h.base}/console/sign-in`);
    await h.signIn(page, owner.email);
    await page.waitForURL((u) => !u.pathname.endsWith("/sign-in"));
    h.expectNoConsoleErrors(page, "sign-in", /401/);
    await page.goto(`${h.base}/console/projects/${p.id}/keys`);
    await h.settled(page);

    // Bad input: an expiry in the past is the server's field error, at the expiry field.
    await page.getByLabel("Key name").fill("scoped");
    await page.getByText("Limits and expiry (optional)").click();
    const endpoints = page.getByRole("group", { name: "Endpoints" });
    await endpoints.getByLabel("resolve", { exact: true }).check();
    await page.getByLabel("Expires (optional)").fill(await localTime(page, t.clock.now - 60 * MINUTE));
    await page.getByRole("button", { name: "Create key" }).click();
    await expect
      .poll(() => page.locator(".field-error").allTextContents())
      .toEqual(["The expiry is in the past. Choose a time to come."]);
    await h.audit(page, "keys-field-error");
    h.expectNoConsoleErrors(page, "keys-field-error", /\/keys/);

    // A key limited to resolve, expiring in an hour of the server's clock.
    await page.getByLabel("Expires (optional)").fill(await localTime(page, t.clock.now + 60 * MINUTE));
    await page.getByRole("button", { name: "Create key" }).click();
    const scoped = await newSecret(page);
    await page.getByRole("button", { name: "I have stored it" }).click();
    expect(await call(scoped, "resolve?domain=alice.wallet")).toEqual({ status: 200, code: null });
    expect(await call(scoped, "deep-resolve?domain=alice.wallet")).toEqual({
      status: 403,
      code: "ENDPOINT_NOT_ALLOWED",
    });

    // A second key, unlimited, to rotate.
    await page.getByLabel("Key name").fill("backend");
    await page.getByRole("group", { name: "Endpoints" }).getByLabel("resolve", { exact: true }).uncheck();
    await page.getByLabel("Expires (optional)").fill("");
    await page.getByRole("button", { name: "Create key" }).click();
    const old = await newSecret(page);
    await page.getByRole("button", { name: "I have stored it" }).click();
    expect((await call(old, "deep-resolve?domain=alice.wallet")).status).toBe(200);

    // The limits dialog of the scoped key: the ticked endpoint, checked by axe.
    await page.getByRole("button", { name: "Limits of scoped" }).click();
    const limits = page.getByRole("dialog", { name: "Limits of scoped" });
    expect(
      await limits
        .getByRole("group", { name: "Endpoints" })
        .getByLabel("resolve", { exact: true })
        .isChecked(),
    ).toBe(true);
    await h.audit(page, "keys-limits-dialog");
    await limits.getByRole("button", { name: "Cancel" }).click();

    // Rotation: an overlap beyond 30 days is refused at its field; ten minutes is taken.
    await page.getByRole("button", { name: "Rotate backend" }).click();
    const rotate = page.getByRole("dialog", { name: "Rotate backend?" });
    await rotate
      .getByLabel("Old key works until")
      .fill(await localTime(page, t.clock.now + 31 * 24 * 60 * MINUTE));
    await rotate.getByRole("button", { name: "Rotate key" }).click();
    await rotate.getByText("is more than 30 days ahead. Choose a time within 30 days.").waitFor();
    h.expectNoConsoleErrors(page, "keys-rotate-error", /\/rotate/);
    await rotate.getByLabel("Old key works until").fill(await localTime(page, t.clock.now + 10 * MINUTE));
    await h.audit(page, "keys-rotate-dialog");
    await rotate.getByRole("button", { name: "Rotate key" }).click();
    const fresh = await newSecret(page);
    expect(await page.getByTestId("overlap").textContent()).toContain("keeps working until");
    await page.getByRole("button", { name: "I have stored it" }).click();
    for (const k of [old, fresh]) expect((await call(k, "resolve?domain=alice.wallet")).status).toBe(200);

    // The table: limits, expiry, last use, requests this month, the rotation's overlap.
    await page.reload();
    await h.settled(page);
    const row = (name: string) => page.locator("tbody tr", { hasText: name });
    await expect.poll(() => row("scoped").first().textContent()).toContain("resolve");
    expect(await page.locator("tbody tr", { hasText: "end of the overlap" }).count()).toBe(1);
    expect(await page.locator("tbody tr .badge", { hasText: /^rotated$/ }).count()).toBe(1);
    await page.getByRole("heading", { name: "Keys", exact: true }).scrollIntoViewIfNeeded();
    await h.shot(page, "09b-keys-limits");

    // Ten minutes later the rotated key is refused, its replacement is not; an hour later the
    // scoped key has expired.
    t.clock.now += 10 * MINUTE;
    expect(await call(old, "resolve?domain=alice.wallet")).toEqual({ status: 401, code: "API_KEY_EXPIRED" });
    expect((await call(fresh, "resolve?domain=alice.wallet")).status).toBe(200);
    expect((await call(scoped, "resolve?domain=alice.wallet")).status).toBe(200);
    t.clock.now += 50 * MINUTE;
    expect(await call(scoped, "resolve?domain=alice.wallet")).toEqual({
      status: 401,
      code: "API_KEY_EXPIRED",
    });
    await page.reload();
    await h.settled(page);
    await expect.poll(() => page.locator("tbody tr", { hasText: "expired" }).count()).toBe(2);
    await h.audit(page, "keys-expired");
    h.expectNoConsoleErrors(page, "keys-expired");
    expect(h.pageErrors).toEqual([]);
    expect(h.cspViolations).toEqual([]);
  }, 180_000);
});
