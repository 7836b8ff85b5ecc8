// The audit log page in a real Chromium (Debian's, via playwright-core): a key created in the
// console appears in the log with its author and no secret, the filters narrow it, the CSV export
// downloads, axe-core finds no violation and the browser console prints no error; a developer
// has no tab and is told the log is for owners and admins.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type BrowserHarness, hasChromium, startBrowserHarness } from "./helpers/browser.js";

describe.skipIf(!hasChromium)("the audit log page in Chromium", () => {
  let h: BrowserHarness;
  beforeAll(async () => {
    h = await startBrowserHarness();
  }, 300_000);
  afterAll(async () => {
    await h?.close();
  });

  const signedIn = (email: string) => h.signedInPage(email);

  it("lists a change made in the console, filters it, exports it, with no axe violation or error", async () => {
    const owner = await createAccount(h.t, "audit-owner");
    const dev = await createAccount(h.t, "audit-dev");
    const p = await createProject(h.t, [
      { id: owner.id, role: "owner" },
      { id: dev.id, role: "developer" },
    ]);
    const page = await signedIn(owner.email);
    await page.goto(`${h.base}/console/projects/${p.id}/keys`);
    await page.getByLabel("Key name").fill("audited backend");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent())!.trim();
    await page.getByRole("button", { name: "I have stored it" }).click();

    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const table = page.getByRole("region", { name: "Audit log entries" });
    await table.getByText("key.create").waitFor();
    const row = table.getByRole("row").filter({ hasText: "key.create" });
    expect(await row.textContent()).toContain(owner.email);
    expect(await row.textContent()).toContain("audited backend");
    expect(await page.content()).not.toContain(key);
    await h.shot(page, "32-audit-log");

    // A filter that matches nothing, then back to all kinds.
    await page.getByLabel("Kind of change").selectOption("member.role");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.getByText("No changes recorded").waitFor();
    await page.getByLabel("Kind of change").selectOption("key.create");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await table.getByText("key.create").waitFor();

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Export CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`audit-project-${p.id}.csv`);
    const csv = readFileSync((await download.path())!, "utf8");
    expect(csv.split("\r\n")[0]).toBe(
      "id,at,kind,actor,actor_account_id,actor_email,ip,subject,before,after",
    );
    expect(csv).toContain(`,key.create,account,${owner.id},${owner.email},127.0.0.1,`);
    expect(csv).not.toContain(key);
    h.expectNoConsoleErrors(page, "audit log");

    const devPage = await signedIn(dev.email);
    await devPage.goto(`${h.base}/console/projects/${p.id}`);
    await devPage.getByRole("heading", { name: "Overview" }).waitFor();
    expect(await devPage.getByRole("link", { name: "Audit log" }).count()).toBe(0);
    await devPage.goto(`${h.base}/console/projects/${p.id}/audit`);
    await devPage.getByText("Only the project's owners and admins see its audit log.").waitFor();
    await h.audit(devPage, "audit log (developer)");
    h.expectNoConsoleErrors(devPage, "audit log (developer)");
  }, 180_000);
});
