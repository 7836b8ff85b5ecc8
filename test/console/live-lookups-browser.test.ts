// The resolution settings' live-lookups toggle in a real Chromium (Debian's, via playwright-core):
// turned off and saved, the project's stored settings say liveLookups false (its ENS names under
// offchain and wildcard resolvers then answer from the map alone, test/judge/ens-live-map.test.ts);
// turned on again, the setting is gone (the default); no axe violation, no console error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type BrowserHarness, hasChromium, startBrowserHarness } from "./helpers/browser.js";

describe.skipIf(!hasChromium)("the live lookups toggle in Chromium", () => {
  let h: BrowserHarness;
  beforeAll(async () => {
    h = await startBrowserHarness();
  }, 300_000);
  afterAll(async () => {
    await h?.close();
  });

  it("turns a project's live ENS lookups off and on again", async () => {
    const owner = await createAccount(h.t, "live-owner");
    const p = await createProject(h.t, [{ id: owner.id, role: "owner" }]);
    const page = await h.signedInPage(owner.email);
    const stored = async () => (await h.t.store.projects.findProjectById(p.id))?.settings ?? {};
    await page.goto(`${h.base}/console/projects/${p.id}/resolution`);
    await page.getByRole("heading", { name: "Resolution settings" }).waitFor();
    const toggle = page.getByRole("switch", { name: "Look up offchain ENS names" });
    expect(await toggle.isChecked()).toBe(true);

    await toggle.click();
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(stored).toMatchObject({ liveLookups: false });
    await page.reload();
    await page.getByRole("heading", { name: "Resolution settings" }).waitFor();
    expect(await page.getByRole("switch", { name: "Look up offchain ENS names" }).isChecked()).toBe(false);
    await h.audit(page, "resolution settings (live lookups off)");

    await page.getByRole("switch", { name: "Look up offchain ENS names" }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => "liveLookups" in (await stored())).toBe(false);
    h.expectNoConsoleErrors(page, "resolution settings");
  }, 180_000);
});
