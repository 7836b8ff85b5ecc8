// The usage alerts on the console's dashboard in a real Chromium (Debian's, via playwright-core):
// an owner sees the banner of today's 80 % alert and the list, axe-core finds no violation in
// them, and a developer (whose role may not read alerts) sees neither and the page asks nothing
// it would be refused (a 403 would be an error in the browser's console).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.js";
import { createAccount, createProject } from "./helpers/accounts.js";
import { CHROMIUM, launchChromium } from "./helpers/chromium.js";
import { type ConsoleTestApp, createConsoleTestApp, PASSWORD, V1 } from "./helpers/console-app.js";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const distDir = join(repo, "web", "dist");
const require = createRequire(import.meta.url);
const hasChromium = existsSync(CHROMIUM);

describe.skipIf(!hasChromium)("usage alerts on the dashboard in Chromium", () => {
  let t: ConsoleTestApp;
  let base: string;
  let browser: Browser;
  const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

  beforeAll(async () => {
    if (!existsSync(join(distDir, "index.html")))
      execFileSync(process.execPath, [join(repo, "scripts", "build.mjs")], { cwd: repo, stdio: "inherit" });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createConsoleTestApp({
      consoleDistDir: distDir,
      config: {
        publicUrl: base,
        plans: {
          free: { rps: 1000, monthlyQuota: 1_000_000, maxProjects: 5, maxKeys: 5, maxMembers: 10 },
          metered: { rps: 1000, monthlyQuota: 25, maxProjects: 5, maxKeys: 5, maxMembers: 10 },
        },
      },
    });
    await t.app.listen({ port, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signedInPage(email: string): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${base}/console/sign-in`);
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((u) => !u.pathname.endsWith("/sign-in"));
    // Errors count from here: the signed-out sign-in page's session probe logs a 401 of its own,
    // a defect of the sign-in page, not of the pages under test.
    errors.length = 0;
    return { page, errors };
  }

  it("shows an owner today's 80 % alert with no axe violation; a developer sees none and no error", async () => {
    const owner = await createAccount(t, "owner");
    const dev = await createAccount(t, "dev");
    const p = await createProject(
      t,
      [
        { id: owner.id, role: "owner" },
        { id: dev.id, role: "developer" },
      ],
      "metered",
    );
    const { key } = await t.services.projects.createKey(p.id, "backend");
    for (let i = 0; i < 20; i++)
      expect(
        (await t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers: { "api-key": key } }))
          .statusCode,
      ).toBe(200);
    await t.services.alerts.drain();
    await t.smtp.waitFor(owner.email, /80 %/);

    const { page, errors } = await signedInPage(owner.email);
    await page.goto(`${base}/console/projects/${p.id}`);
    const banner = page.getByRole("alert").filter({ hasText: "Usage alert" });
    await banner.waitFor();
    expect(await banner.textContent()).toContain("80 % of the monthly quota is used (20 of 25 requests)");
    const list = page.getByRole("region", { name: "Usage alerts" });
    expect(await list.getByRole("listitem").count()).toBe(1);
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (
        window as unknown as { axe: { run: (c: unknown) => Promise<{ violations: { id: string }[] }> } }
      ).axe;
      return (await axe.run(document)).violations.map((v) => v.id);
    });
    expect(violations).toEqual([]);
    expect(errors).toEqual([]);
    // The picture of docs/console.md, refreshed with UPDATE_SCREENSHOTS=1 like the journey's.
    if (process.env.UPDATE_SCREENSHOTS === "1")
      await page.screenshot({ path: join(repo, "docs", "console", "14c-usage-alerts.png") });

    const devView = await signedInPage(dev.email);
    const asked: string[] = [];
    devView.page.on("request", (r) => asked.push(new URL(r.url()).pathname));
    await devView.page.goto(`${base}/console/projects/${p.id}`);
    await devView.page.getByRole("heading", { name: "Overview" }).waitFor();
    await devView.page.waitForLoadState("networkidle");
    expect(await devView.page.getByText("Usage alert").count()).toBe(0);
    expect(asked.filter((u) => u.endsWith("/alerts"))).toEqual([]);
    expect(devView.errors).toEqual([]);
  });
});
