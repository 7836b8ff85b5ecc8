// The webhooks page in a real Chromium (Debian's, via playwright-core): an owner adds a webhook
// whose receiver is a real HTTP server on 127.0.0.1 (the embedded defaults allow http to loopback),
// sees the signing secret once, sends a test event that the receiver verifies with
// `standardwebhooks`, and finds the attempt in the delivery log; edits, disables, enables and
// deletes it. Bad input shows a field error: a plain http URL to another host, a private address,
// no event type. axe-core finds no violation, the browser console prints no error; a developer has
// no tab and is told the page is for owners and admins.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhooksRepo } from "../../src/accounts/webhooks.repo.js";
import { startReceiver } from "../webhooks/receiver.js";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type BrowserHarness, hasChromium, startBrowserHarness } from "./helpers/browser.js";

describe.skipIf(!hasChromium)("the webhooks page in Chromium", () => {
  let h: BrowserHarness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    h = await startBrowserHarness();
    receiver = await startReceiver(() => ({ status: 200 }));
  }, 300_000);
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  const signedIn = (email: string) => h.signedInPage(email);

  const fieldError = (page: Page, label: string) =>
    page.locator(".field", { has: page.getByLabel(label) }).locator(".field-error");

  it("creates a webhook, shows its secret once, delivers a test event and logs it", async () => {
    const owner = await createAccount(h.t, "hooks-owner");
    const dev = await createAccount(h.t, "hooks-dev");
    const p = await createProject(h.t, [
      { id: owner.id, role: "owner" },
      { id: dev.id, role: "developer" },
    ]);
    const page = await signedIn(owner.email);
    await page.goto(`${h.base}/console/projects/${p.id}`);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByText("No webhooks yet").waitFor();
    await h.audit(page, "webhooks (empty)");

    // Bad input, each on its field: plain http to another host, a private address, no event type.
    const url = page.getByLabel("Endpoint URL");
    const create = page.getByRole("button", { name: "Create webhook" });
    // A public address literal: refused for its scheme, with no DNS lookup and no connection.
    await url.fill("http://93.184.216.34/omniname");
    await create.click();
    await fieldError(page, "Endpoint URL")
      .getByText(
        "Use an https:// address. Plain http:// is accepted only to a loopback address (127.0.0.1) of this machine.",
      )
      .waitFor();
    await url.fill("https://10.0.0.1/hook");
    await create.click();
    await fieldError(page, "Endpoint URL")
      .getByText("10.0.0.1 is a private address. Webhooks are delivered to public addresses only.")
      .waitFor();
    await url.fill(receiver.url("/console"));
    for (const box of await page.locator(".webhook-types input[type=checkbox]").all()) await box.uncheck();
    await create.click();
    await page.getByText("Choose at least one event type.").waitFor();
    expect(await page.getByText("Choose at least one event type.").getAttribute("role")).toBe("alert");
    await h.shot(page, "34-webhook-field-errors", /webhooks/);
    expect(await new WebhooksRepo(h.t.store.accounts).listByProject(p.id)).toEqual([]);

    // A valid one: the secret is shown once.
    await page.getByLabel("domain.updated").check();
    await page.getByLabel("winner.changed").check();
    await page.getByLabel("Description").fill("console journey receiver");
    await create.click();
    const secret = (await page.getByTestId("webhook-secret").textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    receiver.secrets.set("/console", secret);
    await page.getByRole("button", { name: "I have stored it" }).click();
    const endpoints = page.getByRole("region", { name: "Your webhooks" });
    await endpoints.locator("code", { hasText: receiver.url("/console") }).waitFor();
    expect(await endpoints.textContent()).toContain("domain.updated, winner.changed");
    await page.reload();
    await endpoints.locator("code", { hasText: receiver.url("/console") }).waitFor();
    expect(await page.content()).not.toContain(secret);

    // A test event: delivered, verified by the receiver, in the log with status and latency.
    await page.getByRole("button", { name: `Send a test event to ${receiver.url("/console")}` }).click();
    await page
      .getByRole("status")
      .getByText(/delivered \(HTTP 200\)/)
      .waitFor();
    const got = receiver.received.filter((r) => r.path === "/console");
    expect(got).toHaveLength(1);
    expect(got[0]!.verified).toBe(true);
    expect(got[0]!.json.type).toBe("webhook.test");
    const log = page.getByRole("region", { name: "Delivery log" });
    await log.getByText("webhook.test").waitFor();
    const row = log.getByRole("row").filter({ hasText: "webhook.test" });
    expect(await row.textContent()).toMatch(/200.*delivered.*\d+ ms.*answer 200/);
    await log.scrollIntoViewIfNeeded();
    await h.shot(page, "33-webhooks");

    // Edit (a filter), disable, enable, delete.
    await page.getByRole("button", { name: `Edit ${receiver.url("/console")}` }).click();
    const dialog = page.getByRole("dialog", { name: "Edit the webhook" });
    await dialog.getByText(/^Filters/).click();
    await dialog.getByLabel("Domains", { exact: true }).fill("alice.wallet, bob.crypto");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "hidden" });
    const [stored] = await new WebhooksRepo(h.t.store.accounts).listByProject(p.id);
    expect(stored!.filters).toEqual({ domains: ["alice.wallet", "bob.crypto"] });
    await page.getByRole("button", { name: `Disable ${receiver.url("/console")}` }).click();
    await endpoints.locator(".badge", { hasText: "disabled" }).waitFor();
    await page.getByRole("button", { name: `Enable ${receiver.url("/console")}` }).click();
    await endpoints.locator(".badge", { hasText: "enabled" }).waitFor();
    await page.getByRole("button", { name: `Delete ${receiver.url("/console")}` }).click();
    await page.getByRole("button", { name: "Delete webhook" }).click();
    await page.getByText("No webhooks yet").waitFor();
    h.expectNoConsoleErrors(page, "webhooks", /webhooks/);

    // A developer: no tab, and the page says who may use it.
    const devPage = await signedIn(dev.email);
    await devPage.goto(`${h.base}/console/projects/${p.id}`);
    await devPage.getByRole("heading", { name: "Overview" }).waitFor();
    expect(await devPage.getByRole("link", { name: "Webhooks" }).count()).toBe(0);
    await devPage.goto(`${h.base}/console/projects/${p.id}/webhooks`);
    await devPage.getByText("Only the project's owners and admins manage its webhooks.").waitFor();
    await h.audit(devPage, "webhooks (developer)");
    h.expectNoConsoleErrors(devPage, "webhooks (developer)");
  }, 180_000);
});
