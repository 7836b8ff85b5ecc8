// The web console in a real Chromium (Debian's /usr/bin/chromium driven by playwright-core): a new
// partner's whole journey over the real HTTP server, store and SMTP sink. The failures a person
// meets, signed-out pages and phones are in browser-failures.test.ts, two-factor sign-in in
// browser-two-factor.test.ts, the harness in helpers/browser.ts. axe-core checks every page; every
// page is photographed: into docs/console/ (shown in docs/console.md) when UPDATE_SCREENSHOTS=1,
// else into a temporary directory, so `npm test` leaves the tree clean.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin } from "../../src/cli/admin.command.js";
import {
  type BrowserHarness,
  CHROMIUM,
  distDir,
  hasChromium,
  linkOf,
  repo,
  seedCollision,
  startBrowserHarness,
} from "./helpers/browser.js";
import { type ConsoleTestApp, PASSWORD } from "./helpers/console-app.js";

if (!hasChromium)
  console.warn(
    `browser-journey: SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium fonts-liberation)`,
  );

describe.skipIf(!hasChromium)("the web console in Chromium", () => {
  let h: BrowserHarness;
  let t: ConsoleTestApp;
  let base: string;
  let browser: Browser;
  const metrics: Record<string, number> = {};

  beforeAll(async () => {
    h = await startBrowserHarness((app) => seedCollision(app.store, app.clock.now));
    ({ t, base, browser } = h);
  }, 300_000);

  afterAll(async () => {
    await h?.close();
  });

  const newPage = (viewport?: { width: number; height: number }) => h.newPage(viewport);
  const shot = (page: Page, name: string, provoked?: RegExp) => h.shot(page, name, provoked);
  const signIn = (page: Page, email: string, password = PASSWORD) => h.signIn(page, email, password);

  async function resolve(key: string, domain = "shared.wallet") {
    const res = await fetch(`${base}/svc/api/v1/resolve?domain=${domain}`, { headers: { "api-key": key } });
    return {
      status: res.status,
      body: (await res.json()) as { data?: { provider: string; network: string } },
    };
  }

  it("takes a partner from the invitation to a revoked key, with a read-only viewer on the way", async () => {
    const email = "ada@partner.example";
    const page = await newPage();

    // First page interactive: from the navigation's start (the page's own clock) until the
    // sign-in form is rendered and enabled; cold (empty cache) and again with the cached assets.
    const interactive = async (p: Page) => {
      const handle = await p.waitForFunction(
        () => {
          const b = document.querySelector<HTMLButtonElement>("main button[type=submit]");
          return b !== null && !b.disabled ? performance.now() : null;
        },
        null,
        { polling: "raf" },
      );
      return Math.round((await handle.jsonValue()) as number);
    };
    await page.goto(`${base}/console/sign-in`);
    metrics.firstPageInteractiveColdMs = await interactive(page);
    await page.reload();
    metrics.firstPageInteractiveCachedMs = await interactive(page);
    // A first visit in a browser that is already running: a new context has an empty cache.
    const fresh = await (await browser.newContext()).newPage();
    await fresh.goto(`${base}/console/sign-in`);
    metrics.firstPageInteractiveNewContextMs = await interactive(fresh);
    await fresh.context().close();
    metrics.domContentLoadedMs = await page.evaluate(() =>
      Math.round(
        (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming)
          .domContentLoadedEventEnd,
      ),
    );
    await shot(page, "01-sign-in");

    // The operator invites with the CLI; the link arrives by SMTP.
    const out: string[] = [];
    expect(
      await runAdmin(t.ctx, ["invite", email], { out: (s) => out.push(s), err: (s) => out.push(s) }),
    ).toBe(0);
    const invitation = await t.smtp.waitFor(email, /invitation/i);
    await page.goto(linkOf(invitation));
    await expect.poll(() => page.getByText("The omniname team invited you").count()).toBe(1);
    expect(await page.getByLabel("E-mail address").inputValue()).toBe(email);
    await page.getByLabel("Full name").fill("Ada Partner");
    await page.getByLabel("Password", { exact: true }).fill("password123");
    // The strength hint comes from the server's rules as the person types.
    await page.locator(".strength").waitFor();
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await expect.poll(() => page.locator(".strength .ok").count()).toBe(1);
    await shot(page, "02-register");
    await page.getByRole("button", { name: "Create account" }).click();
    // Terms not accepted: said next to the checkbox, nothing sent.
    await page.getByText("Accept the terms to continue.").waitFor();
    await page.getByLabel(/I accept the terms/).check();
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Check your mail" }).waitFor();
    await shot(page, "03-check-your-mail");

    const verification = await t.smtp.waitFor(email, /Verify/);
    await page.goto(linkOf(verification));
    await page.getByRole("heading", { name: "E-mail address verified" }).waitFor();
    await shot(page, "04-verified");
    await page.getByRole("link", { name: "Sign in" }).click();

    // Wrong password: one clear message, still on the sign-in page.
    await signIn(page, email, "not my password at all");
    await page.getByRole("alert").filter({ hasText: "Wrong e-mail address or password" }).waitFor();
    await shot(page, "05-sign-in-wrong-password", /status of 401 .*\/auth\/login\]/);
    await signIn(page, email);
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await page.getByText("No projects yet").waitFor();
    // The plan's limit on projects is shown before the first project exists.
    await page.getByText(/^You own 0 of the \d+ projects your plan allows\.$/).waitFor();
    await shot(page, "06-projects-empty");

    await page.getByRole("button", { name: "New project" }).click();
    await page.getByLabel("Project name").fill("Wallet app");
    await page.getByLabel("Description (optional)").fill("Names in our wallet's send screen");
    await shot(page, "07-project-create");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const projectId = Number(/\/projects\/(\d+)/.exec(page.url())![1]);
    await page.getByText("No requests in the last 30 days").waitFor();

    // An API key, shown once.
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByText("No API keys yet").waitFor();
    await page.getByLabel("Key name").fill("production backend");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent())!.trim();
    expect(key).toMatch(/^on_[0-9a-f]{8}_[A-Za-z0-9]{32}$/);
    await page.getByText("you will not see it again").waitFor();
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    await shot(page, "08-key-created");
    await page.getByRole("button", { name: "I have stored it" }).click();
    await expect.poll(() => page.getByText("you will not see it again").count()).toBe(0);
    await shot(page, "09-keys");

    // The key answers over HTTP: NAMESPACE_A on POLYGON wins the collision by score.
    let r = await resolve(key);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ provider: "NAMESPACE_A", network: "POLYGON" });
    expect((await resolve(key, "nobody.wallet")).status).toBe(404);

    // Switch POLYGON off: the answer changes to the other namespace.
    await page.getByRole("link", { name: "Resolution" }).click();
    await page.getByRole("heading", { name: "Resolution settings" }).waitFor();
    await page.getByRole("switch", { name: "Polygon" }).click();
    // SOLANA and NAMESPACE_D are live: their switches can be used like the others.
    expect(await page.getByRole("switch", { name: "Solana", exact: true }).isDisabled()).toBe(false);
    expect(await page.getByRole("switch", { name: "Solana Name Service" }).isDisabled()).toBe(false);
    await page.getByRole("button", { name: "Preview impact (dry run)" }).click();
    await page.getByRole("heading", { name: /names? changes? winner/ }).waitFor();
    await shot(page, "10-resolution-dry-run");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved. The API applies").waitFor();
    r = await resolve(key);
    expect(r.body.data).toMatchObject({ provider: "NAMESPACE_B", network: "ETHEREUM" });
    await page.getByRole("switch", { name: "Polygon" }).click();
    // Serving POLYGON again brings back names that exist elsewhere too: said before saving.
    await page.getByText("This choice creates collisions.").waitFor();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved. The API applies").waitFor();
    expect((await resolve(key)).body.data).toMatchObject({ provider: "NAMESPACE_A" });

    // An exception: the dry run names the change before it is saved; then the winner changes.
    await page.getByRole("link", { name: "Collisions" }).click();
    await page.getByRole("heading", { name: "Collision management" }).waitFor();
    await page.getByText("No exceptions").waitFor();
    // A server-side validation message lands next to the field it names.
    await page.getByRole("button", { name: "Add exception" }).click();
    await page.getByLabel("Exception 1: domain name").fill("not a name!");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.locator("#ex-0-value-err").waitFor();
    expect(await page.getByLabel("Exception 1: domain name").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("Exception 1: domain name").fill("shared.wallet");
    await page.getByLabel("Exception 1: preferred namespace").selectOption("NAMESPACE_B");
    await page.getByRole("button", { name: "Preview impact (dry run)" }).click();
    const dry = page.getByRole("region", { name: "Dry run result" });
    await dry.getByRole("heading", { name: "1 name changes winner" }).waitFor();
    expect(await dry.getByRole("cell", { name: "shared.wallet" }).count()).toBe(1);
    expect(await resolve(key).then((x) => x.body.data?.provider)).toBe("NAMESPACE_A");
    await shot(page, "11-collisions-dry-run", /status of 400 .*\/settings\]/);
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved. The API applies").waitFor();
    r = await resolve(key);
    expect(r.body.data).toMatchObject({ provider: "NAMESPACE_B", network: "ETHEREUM" });
    // Priority reordered with the keyboard only.
    await page.getByRole("button", { name: "Move Unstoppable Domains up" }).focus();
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.locator(".priority-name").first().textContent())
      .toContain("Unstoppable Domains");
    await page.getByRole("button", { name: "Discard" }).click();
    await shot(page, "12-collisions");

    // Try it: the project's settings, explained.
    await page.getByRole("link", { name: "Try it" }).click();
    await page.getByRole("heading", { name: "Try it" }).waitFor();
    await page.getByLabel("Domain name", { exact: true }).fill("shared.wallet");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("heading", { name: /Why this answer/ }).waitFor();
    expect(await page.locator(".row-winner").first().textContent()).toContain("Unstoppable Domains");
    await shot(page, "13-try-it");
    // Deep resolve: both records, the exception's first; reverse resolve: the owner's names.
    await page.getByText("Deep resolve", { exact: true }).click();
    await page.getByRole("button", { name: "Run" }).click();
    await expect
      .poll(() => page.locator(".table tbody tr").filter({ hasText: "shared.wallet" }).count())
      .toBeGreaterThanOrEqual(2);
    await page.getByText("Reverse resolve", { exact: true }).click();
    await page
      .getByLabel("Wallet address", { exact: true })
      .fill("0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("GET /svc/api/v1/reverse-resolve").waitFor();
    expect(await page.getByRole("cell", { name: "shared.wallet" }).count()).toBeGreaterThan(0);

    // Usage reached the dashboard.
    await page.getByRole("link", { name: "Overview" }).click();
    await page.locator(".recharts-surface").first().waitFor();
    await page.waitForTimeout(1600); // the bars' entry animation
    await shot(page, "14-dashboard");
    await page.locator(".chart").first().scrollIntoViewIfNeeded();
    await page.getByRole("heading", { name: "Latency per day (ms)" }).scrollIntoViewIfNeeded();
    await shot(page, "14b-dashboard-charts");
    // The per-day charts for one endpoint.
    await page.getByLabel("Endpoint", { exact: true }).selectOption("resolve");
    await page.locator(".recharts-surface").first().waitFor();
    expect(await page.locator(".stat-value").first().textContent()).toMatch(/^[1-9]/);

    // Security allowlists: the browser's check first, then saved.
    await page.getByRole("link", { name: "Security" }).click();
    await page.getByLabel(/IP addresses and CIDR ranges/).fill("10.0.0.0/8\nnot-an-ip");
    await page.getByRole("button", { name: "Save allowlists" }).click();
    await page.getByText('"not-an-ip" is not an IP address').waitFor();
    await page.getByLabel(/IP addresses and CIDR ranges/).fill("127.0.0.1\n::1\n10.0.0.0/8");
    await page.getByLabel(/Browser origins/).fill("https://app.partner.example");
    await page.getByRole("button", { name: "Save allowlists" }).click();
    await page.getByText("Saved. The allowlists apply").waitFor();
    await shot(page, "15-security");

    // The team: invite a viewer, who registers and sees everything read-only.
    const viewerEmail = "vic@partner.example";
    await page.getByRole("link", { name: "Team" }).click();
    await page.getByLabel("E-mail address").fill(viewerEmail);
    await page.getByLabel("Role").selectOption("viewer");
    await page.getByRole("button", { name: "Send invitation" }).click();
    await page.getByText(`Invitation sent to ${viewerEmail}`).waitFor();
    await shot(page, "16-team");

    const viewer = await newPage();
    await viewer.goto(linkOf(await t.smtp.waitFor(viewerEmail, /invit/i)));
    await viewer.getByText("Ada Partner").first().waitFor();
    expect(await viewer.getByText("Wallet app").count()).toBeGreaterThan(0);
    await viewer.getByLabel("Full name").fill("Vic Viewer");
    await viewer.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await viewer.getByLabel(/I accept the terms/).check();
    await viewer.getByRole("button", { name: "Create account" }).click();
    await viewer.getByRole("heading", { name: "Check your mail" }).waitFor();
    await viewer.goto(linkOf(await t.smtp.waitFor(viewerEmail, /Verify/)));
    await viewer.getByRole("link", { name: "Sign in" }).click();
    await signIn(viewer, viewerEmail);
    await viewer.getByRole("link", { name: "Wallet app" }).click();
    await viewer.getByText("You are a viewer in this project").waitFor();
    await viewer.getByRole("link", { name: "Resolution" }).click();
    await viewer.getByRole("heading", { name: "Resolution settings" }).waitFor();
    for (const s of await viewer.getByRole("switch").all()) expect(await s.isDisabled()).toBe(true);
    expect(await viewer.getByRole("button", { name: "Save changes" }).count()).toBe(0);
    await shot(viewer, "17-viewer-resolution");
    await viewer.getByRole("link", { name: "Collisions" }).click();
    await viewer.getByRole("heading", { name: "Collision management" }).waitFor();
    expect(await viewer.getByRole("button", { name: "Add exception" }).count()).toBe(0);
    expect(await viewer.getByRole("button", { name: /Move .* up/ }).count()).toBe(0);
    await viewer.getByRole("link", { name: "API keys" }).click();
    await viewer.getByRole("heading", { name: "API keys" }).waitFor();
    expect(await viewer.getByRole("button", { name: "Create key" }).count()).toBe(0);
    expect(await viewer.getByRole("button", { name: /Revoke/ }).count()).toBe(0);
    await viewer.getByRole("link", { name: "Team" }).click();
    await viewer.getByRole("heading", { name: "Team" }).waitFor();
    expect(await viewer.getByRole("button", { name: "Send invitation" }).count()).toBe(0);
    await viewer.getByRole("link", { name: "Security" }).click();
    await viewer.getByRole("heading", { name: "Security" }).waitFor();
    expect(await viewer.getByRole("button", { name: "Save allowlists" }).count()).toBe(0);
    await shot(viewer, "18-viewer-security");

    // The owner changes the viewer's role; the change is kept.
    await page.getByRole("link", { name: "Team" }).click();
    await page.reload(); // Vic joined since this page loaded
    // Each change asks for a confirmation first and says what was done.
    await page.getByLabel("Role of Vic Viewer").selectOption("developer");
    await page
      .getByRole("dialog", { name: "Make Vic Viewer a developer?" })
      .getByRole("button", { name: "Change role" })
      .click();
    await page.getByText("Vic Viewer is now a developer.").waitFor();
    await page.reload();
    await expect.poll(() => page.getByLabel("Role of Vic Viewer").inputValue()).toBe("developer");
    await page.getByLabel("Role of Vic Viewer").selectOption("viewer");
    await page
      .getByRole("dialog", { name: "Make Vic Viewer a viewer?" })
      .getByRole("button", { name: "Change role" })
      .click();
    await page.getByText("Vic Viewer is now a viewer.").waitFor();
    await page.reload();
    await expect.poll(() => page.getByLabel("Role of Vic Viewer").inputValue()).toBe("viewer");

    // The project's details: the owner edits the description (a blank name is refused in the
    // page), and cannot leave as the last owner; the viewer can only leave, and then it is gone.
    await page.getByRole("link", { name: "Overview" }).click();
    const about = page.getByRole("region", { name: "About this project" });
    await about.getByRole("button", { name: "Edit details" }).click();
    await about.getByLabel("Project name").fill("  ");
    await about.getByRole("button", { name: "Save details" }).click();
    await about.getByText("Give the project a name.").waitFor();
    await about.getByLabel("Project name").fill("Wallet app");
    await about.getByLabel("Description").fill("Resolves names for the wallet's send screen.");
    await about.getByRole("button", { name: "Save details" }).click();
    await about.getByText("The project's details are saved.").waitFor();
    await about.getByText("Resolves names for the wallet's send screen.").waitFor();
    // The last owner is not offered "Leave" and is told how to leave instead.
    await about.getByText("You are this project's only owner").waitFor();
    expect(await about.getByRole("button", { name: "Leave this project" }).count()).toBe(0);
    await shot(page, "18b-project-about");
    await viewer.getByRole("link", { name: "Overview" }).click();
    await viewer.reload(); // the project as this page loaded it is older than the owner's edit
    const viewerAbout = viewer.getByRole("region", { name: "About this project" });
    await viewerAbout.getByText("Resolves names for the wallet's send screen.").waitFor();
    expect(await viewerAbout.getByRole("button", { name: "Edit details" }).count()).toBe(0);
    await viewerAbout.getByRole("button", { name: "Leave this project" }).click();
    await viewer.getByRole("dialog").getByRole("button", { name: "Leave project" }).click();
    await viewer.getByRole("heading", { name: "Projects" }).waitFor();
    await viewer.getByText("No projects yet").waitFor();
    expect(await viewer.getByRole("link", { name: "Wallet app" }).count()).toBe(0);

    // Revoke the key with a confirmation: the key gets 401.
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("button", { name: /Revoke production backend/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click();
    await page
      .getByText(/revoked/)
      .first()
      .waitFor();
    const refused = await resolve(key);
    expect(refused.status).toBe(401);

    // Delete asks for the project's name.
    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("button", { name: "Delete Wallet app" }).click();
    const del = page.getByRole("dialog");
    expect(await del.getByRole("button", { name: "Delete project" }).isDisabled()).toBe(true);
    await del.getByLabel(/Type the project's name/).fill("Wallet ap");
    expect(await del.getByRole("button", { name: "Delete project" }).isDisabled()).toBe(true);
    await shot(page, "19-project-delete");
    await del.getByRole("button", { name: "Cancel" }).click();

    await page.getByRole("link", { name: "Password" }).click();
    await page.getByRole("heading", { name: "Change your password" }).waitFor();
    await shot(page, "20-change-password");
    expect(projectId).toBeGreaterThan(0);
  }, 180_000);

  it("loaded every page under the CSP without a violation or a script error", () => {
    expect(h.cspViolations).toEqual([]);
    expect(h.pageErrors).toEqual([]);
    // Nothing printed after a page's last check either.
    for (const errors of h.consoleErrors.values()) expect(errors).toEqual([]);
    expect(Object.keys(h.audited).length).toBeGreaterThanOrEqual(20);
    const sizes = JSON.parse(readFileSync(join(distDir, ".bundle-sizes.json"), "utf8"));
    const report = { ...metrics, entryGzipBytes: sizes.entryGzipBytes, axeViolations: h.audited };
    mkdirSync(join(repo, ".tmp"), { recursive: true });
    writeFileSync(join(repo, ".tmp", "browser-journey.json"), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`browser-journey: ${JSON.stringify(report)}`);
  });
});
