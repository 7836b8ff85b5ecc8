// The console as a demanding partner walks it, in a real Chromium (helpers/browser.ts):
// a project with realistic data (many keys with long names and limits, a rotated, an expiring and a
// revoked key, a collision exception, webhooks with deliveries to a real receiver, a team with
// invitations, many owned projects), every page at 390 and 1280 px no wider than its viewport and
// axe-clean; the page title named on a direct load; each form's messages for empty, malformed and
// server-refused input in the console's words; the team's role change confirmed; the last owner
// not offered "Leave"; the audit log's webhook.* entries; the webhook URL hint saying what this
// server accepts. Screenshots 36–41 of docs/console with UPDATE_SCREENSHOTS=1.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_ORDER, PROVIDERS } from "../../src/domain/providers.js";
import { startReceiver } from "../webhooks/receiver.js";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type BrowserHarness, hasChromium, seedCollision, startBrowserHarness } from "./helpers/browser.js";
import { Agent, PASSWORD } from "./helpers/console-app.js";

const HOUR = 3_600_000;

describe.skipIf(!hasChromium)("the console's polish in Chromium", () => {
  let h: BrowserHarness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let owner: { id: number; email: string };
  let partner: { id: number; email: string };
  let project: { id: number; name: string };
  let agent: Agent;

  /** The owner's API calls (in-process, the console API), each expected to succeed. */
  async function call(method: "post" | "put" | "patch", url: string, body: unknown = {}) {
    const res = await agent[method](url, body);
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json().data;
  }

  beforeAll(async () => {
    h = await startBrowserHarness(async (t) => seedCollision(t.store, t.clock.now));
    receiver = await startReceiver(() => ({ status: 200 }));
    const { t } = h;
    owner = await createAccount(t, "polish-owner-with-a-rather-long-address");
    partner = await createAccount(t, "polish-partner");
    project = await createProject(
      t,
      [
        { id: owner.id, role: "owner" },
        { id: partner.id, role: "developer" },
      ],
      "pro", // room for many keys
    );
    // A few more projects, so that the projects page has rows with long names.
    for (let i = 0; i < 2; i++) await createProject(t, [{ id: owner.id, role: "owner" }]);
    agent = await new Agent(t.app).start();
    expect((await agent.post("auth/login", { email: owner.email, password: PASSWORD })).statusCode).toBe(200);
    const p = `projects/${project.id}`;
    // Keys: long names and limits, an expiring one, a rotated one in its overlap, a revoked one.
    const keys = [];
    for (let i = 0; i < 8; i++)
      keys.push(
        await call("post", `${p}/keys`, {
          name: `production backend ${i} in the Frankfurt region`,
          endpoints: i % 2 === 0 ? ["resolve", "deep-resolve", "reverse-resolve"] : null,
          networks: i % 3 === 0 ? ["POLYGON", "ETHEREUM"] : null,
          providers: i % 2 === 1 ? ["NAMESPACE_A", "NAMESPACE_B"] : null,
          expiresAt: i === 2 ? new Date(t.clock.now + 48 * HOUR).toISOString() : null,
        }),
      );
    await call("post", `${p}/keys/${keys[2].id}/rotate`, {
      overlapUntil: new Date(t.clock.now + 2 * HOUR).toISOString(),
      expiresAt: new Date(t.clock.now + 48 * HOUR).toISOString(),
    });
    expect((await agent.delete(`${p}/keys/${keys[7].id}`)).statusCode).toBe(200);
    // A collision exception and an allowlist.
    await call("put", `${p}/settings`, {
      exceptions: [{ domain: "shared.wallet", provider: "NAMESPACE_B", network: "ETHEREUM" }],
    });
    // Webhooks with deliveries (test events to the receiver on 127.0.0.1).
    for (const path of ["/orders", "/crm-integration-with-a-long-path/receiver/omniname"]) {
      const { webhook } = await call("post", `${p}/webhooks`, {
        url: receiver.url(path),
        description: `the ${path.slice(1, 12)} receiver`,
        eventTypes: ["domain.created", "winner.changed"],
      });
      for (let i = 0; i < 4; i++) await call("post", `${p}/webhooks/${webhook.id}/test`);
    }
    // The team: invitations with long addresses.
    for (const who of [
      "a-partner-engineer-with-a-long-name@subsidiary.partner.example",
      "ops@partner.example",
    ])
      await call("post", `${p}/members`, { email: who, role: "viewer" });
  }, 300_000);
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  /** The page's widths: the document and the body no wider than the viewport. */
  async function widths(page: Page) {
    return page.evaluate(() => ({
      viewport: window.innerWidth,
      document: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
    }));
  }

  const pages = (id: number) => [
    ["projects", "/projects", "Projects"],
    ["overview", `/projects/${id}`, "Overview"],
    ["resolution", `/projects/${id}/resolution`, "Resolution settings"],
    ["collisions", `/projects/${id}/collisions`, "Collision management"],
    ["try", `/projects/${id}/try`, "Try it"],
    ["keys", `/projects/${id}/keys`, "API keys"],
    ["team", `/projects/${id}/team`, "Team"],
    ["security", `/projects/${id}/security`, "Security"],
    ["webhooks", `/projects/${id}/webhooks`, "Webhooks"],
    ["audit", `/projects/${id}/audit`, "Audit log"],
    ["two-factor", "/account/two-factor", "Two-factor sign-in"],
    ["password", "/account/password", "Change your password"],
  ];

  for (const width of [390, 1280])
    it(`fits every page in ${width} px, names it in the title on a direct load, and axe finds nothing`, async () => {
      const page = await h.newPage({ width, height: width === 390 ? 844 : 800 });
      await page.goto(`${h.base}/console/sign-in`);
      await h.signIn(page, owner.email);
      await page.waitForURL((u) => !u.pathname.endsWith("/sign-in"));
      h.consoleErrors.get(page)!.length = 0;
      for (const [name, path, heading] of pages(project.id)) {
        await page.goto(`${h.base}/console${path}`);
        await h.settled(page);
        await page.getByRole("heading", { level: 1, name: heading, exact: true }).waitFor();
        if (name === "webhooks") {
          await page
            .getByRole("button", { name: /^Deliveries/ })
            .first()
            .click();
          await page.locator("tbody tr", { hasText: "webhook.test" }).first().waitFor();
        }
        // The title names the page on a direct load (the lazy page renders after the router).
        await expect
          .poll(() => page.title(), { message: `title of ${name}` })
          .toBe(`${heading} · omniname console`);
        const w = await widths(page);
        expect(w.document, `${name} at ${width} px: ${JSON.stringify(w)}`).toBeLessThanOrEqual(w.viewport);
        expect(w.body, `${name} at ${width} px: ${JSON.stringify(w)}`).toBeLessThanOrEqual(w.viewport);
        if (path.startsWith("/projects/")) {
          // The breadcrumb's "Projects" is a link back, not the current page.
          const crumb = page.locator(".crumb a");
          expect(await crumb.getAttribute("aria-current")).toBeNull();
          expect(await page.locator("[aria-current=page]").allTextContents()).not.toContain("Projects");
        }
        await h.audit(page, `${name} at ${width} px`);
        h.expectNoConsoleErrors(page, `${name} at ${width} px`);
        if (width === 390 && (name === "keys" || name === "webhooks")) {
          // The photograph shows the table, which scrolls inside its own region.
          await page
            .locator(".table-wrap")
            .first()
            .evaluate((el) => el.scrollIntoView({ block: "start" }));
          await h.shot(page, `36-phone-${name}`);
        }
      }
      // At 1280 px the keys table, a rotated key included, fits its card: no sideways scrolling.
      if (width === 1280) {
        await page.goto(`${h.base}/console/projects/${project.id}/keys`);
        await h.settled(page);
        const wrap = page.locator(".table-wrap");
        const fit = await wrap.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
        expect(fit.scroll, JSON.stringify(fit)).toBeLessThanOrEqual(fit.client);
        // Each date on one line: the line boxes of the date's text, one per cell.
        const lines = await page.locator("tbody td.when").evaluateAll((cells) =>
          cells.map((c) => {
            const range = document.createRange();
            range.selectNodeContents(c.firstChild ?? c);
            return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
          }),
        );
        expect(lines.length).toBeGreaterThan(10);
        expect(Math.max(...lines)).toBe(1);
        await page.locator("tbody tr", { hasText: "end of the overlap" }).waitFor();
        await page.locator(".table-wrap").evaluate((el) => el.scrollIntoView({ block: "start" }));
        await h.shot(page, "37-keys-many");
      }
    }, 240_000);

  it("says each form's refusals in plain words, at the field, and clears them when the field changes", async () => {
    const page = await h.signedInPage(owner.email);
    const fieldErrors = () => page.locator(".field-error").allTextContents();
    const provoked = /status of 400/;

    // Keys: an empty name is refused in the browser (no "unnamed" key); the scope form offers only
    // the providers and networks that are served; the rotate dialog keeps the old key's expiry.
    await page.goto(`${h.base}/console/projects/${project.id}/keys`);
    await h.settled(page);
    const before = (await agent.get(`projects/${project.id}/keys`)).json().data.length;
    await page.getByRole("button", { name: "Create key" }).click();
    expect(await fieldErrors()).toEqual(["Enter a name for the key, e.g. production backend."]);
    expect((await agent.get(`projects/${project.id}/keys`)).json().data.length).toBe(before);
    await page.getByLabel("Key name").fill("reporting");
    expect(await fieldErrors()).toEqual([]);
    await page.getByText("Limits and expiry (optional)").click();
    const providers = page.getByRole("group", { name: "Providers" });
    for (const p of PROVIDER_ORDER)
      expect(await providers.getByLabel(p, { exact: true }).count(), p).toBe(PROVIDERS[p].comingSoon ? 0 : 1);
    // The date-time input is styled as the other inputs are (it once kept the browser's look).
    const look = (sel: string) =>
      page
        .locator(sel)
        .first()
        .evaluate((el) => {
          const c = getComputedStyle(el);
          return [c.borderRadius, c.borderTopColor, c.paddingLeft, c.width === "0px"];
        });
    expect(await look('input[type="datetime-local"]')).toEqual(await look("#main input:not([type])"));
    await page.getByLabel("Expires (optional)").fill("2001-01-01T10:00");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect.poll(fieldErrors).toEqual(["The expiry is in the past. Choose a time to come."]);
    await page.getByLabel("Expires (optional)").fill("");
    expect(await fieldErrors()).toEqual([]); // the refusal went with the value it was about
    h.expectNoConsoleErrors(page, "keys form", provoked);
    await page.getByLabel("Key name").fill("");

    const expiring = page.locator("tbody tr", { hasText: "production backend 4" });
    const rotated = (await agent.get(`projects/${project.id}/keys`)).json().data as Array<{
      id: number;
      name: string;
      expiresAt: string | null;
    }>;
    const target = rotated.find((k) => k.name.includes("backend 4"))!;
    const expiresAt = new Date(h.t.clock.now + 72 * HOUR).toISOString();
    await call("patch", `projects/${project.id}/keys/${target.id}`, { expiresAt });
    await page.reload();
    await h.settled(page);
    await expiring.getByRole("button", { name: /^Rotate/ }).click();
    const dialog = page.getByRole("dialog", { name: /^Rotate production backend 4/ });
    expect(await dialog.getByLabel("New key expires (optional)").inputValue()).not.toBe("");
    await h.audit(page, "rotate dialog with the expiry");
    await dialog.getByRole("button", { name: "Rotate key" }).click();
    await page.getByTestId("new-key").waitFor();
    await page.getByRole("button", { name: "I have stored it" }).click();
    const after = (await agent.get(`projects/${project.id}/keys`)).json().data as Array<{
      name: string;
      expiresAt: string | null;
      rotatedTo: number | null;
    }>;
    const replacement = after.find((k) => k.name.includes("backend 4") && k.rotatedTo === null)!;
    expect(Date.parse(replacement.expiresAt!)).toBe(Math.floor(Date.parse(expiresAt) / 60_000) * 60_000);

    // The project tabs' focus ring is drawn inside the tab (their scrolling bar clips an outer one).
    await page.getByRole("link", { name: "Team", exact: true }).focus();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    const ring = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const c = getComputedStyle(el);
      return { tab: el.classList.contains("tab"), style: c.outlineStyle, offset: c.outlineOffset };
    });
    expect(ring).toEqual({ tab: true, style: "solid", offset: "-3px" });

    // Security: malformed addresses refused in the browser with the server's own words; one the
    // browser lets through is refused by the server in plain words; emptying the field clears it.
    await page.goto(`${h.base}/console/projects/${project.id}/security`);
    await h.settled(page);
    const ips = page.getByLabel(/IP addresses and CIDR ranges/);
    const save = page.getByRole("button", { name: "Save allowlists" });
    await ips.fill("300.1.1.1");
    await save.click();
    expect(await fieldErrors()).toEqual(["300.1.1.1: each number of an IPv4 address is between 0 and 255."]);
    await ips.fill("10.0.0.0/33");
    expect(await fieldErrors()).toEqual([
      '10.0.0.0/33: the prefix length after "/" must be between 0 and 32.',
    ]);
    await ips.fill("1::2::3");
    await save.click();
    await expect
      .poll(fieldErrors)
      .toEqual(['"1::2::3" is not an IP address or range. Write one such as 203.0.113.7 or 10.0.0.0/8.']);
    await ips.fill("");
    expect(await fieldErrors()).toEqual([]);
    await page.getByText("Projects an owner may have").waitFor();
    h.expectNoConsoleErrors(page, "security form", /status of 400 .*\/security\]/);

    // Webhooks: the URL hint says what this server accepts (the embedded setup: loopback too);
    // a private and a link-local address refused in words, without the guard's jargon.
    await page.goto(`${h.base}/console/projects/${project.id}/webhooks`);
    await h.settled(page);
    const form = page.getByRole("region", { name: "Add a webhook" });
    await form.getByText(/http:\/\/ or https:\/\/ to this machine \(127\.0\.0\.1/).waitFor();
    const url = form.getByLabel("Endpoint URL");
    const create = form.getByRole("button", { name: "Create webhook" });
    await create.click();
    await form.getByText("Enter the URL deliveries are sent to.").waitFor();
    await url.fill("example.com/hook");
    await create.click();
    await form.getByText("Enter a full address that starts with https://").waitFor();
    await url.fill("https://169.254.10.1/hook");
    await create.click();
    await form
      .getByText("169.254.10.1 is a link-local address. Webhooks are delivered to public addresses only.")
      .waitFor();
    expect(await form.locator(".field-error").allTextContents()).not.toContainEqual(
      expect.stringMatching(/linkLocal|The field/),
    );
    await h.shot(page, "38-webhook-url-hint", /status of 400 .*\/webhooks\]/);

    // The audit log: a start after the end is said at the field, with no request and no
    // page-level alert; the webhook.* entries are listed.
    await page.goto(`${h.base}/console/projects/${project.id}/audit`);
    await h.settled(page);
    await page.getByLabel("From (UTC day)").fill("2026-12-10");
    await page.getByLabel("To (UTC day)").fill("2026-12-01");
    await page.getByRole("button", { name: "Apply filters" }).click();
    expect(await fieldErrors()).toEqual([
      "The end date is before the start date. Choose an end on or after the start.",
    ]);
    expect(await page.getByRole("button", { name: "Try again" }).count()).toBe(0);
    await page.getByLabel("From (UTC day)").fill("");
    await page.getByLabel("To (UTC day)").fill("");
    await page.getByLabel("Kind of change").selectOption("webhook.create");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => page.locator("tbody tr", { hasText: "webhook.create" }).count()).toBe(2);
    await page.locator(".table-wrap").evaluate((el) => el.scrollIntoView({ block: "start" }));
    await h.shot(page, "39-audit-webhooks");

    // Signed out: "forgot password" wants an address; a damaged reset link is said at once.
    const out = await h.newPage();
    await out.goto(`${h.base}/console/forgot-password`);
    await out.getByLabel("E-mail address").fill("not-an-email");
    await out.getByRole("button", { name: "Send the link" }).click();
    await out.getByText("Enter an e-mail address such as name@company.com.").waitFor();
    await out.goto(`${h.base}/console/reset-password?token=bogus`);
    await out.getByText("This link is incomplete or damaged.", { exact: false }).waitFor();
    expect(await out.getByLabel("New password").count()).toBe(0);
    await out.getByRole("link", { name: "Ask for a new link" }).waitFor();
    await h.audit(out, "damaged reset link");
    h.expectNoConsoleErrors(out, "signed-out forms");

    // A new password: the e-mail address is never "Very strong", and a common password's
    // refusal is said once, under the field.
    await page.goto(`${h.base}/console/account/password`);
    await h.settled(page);
    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByLabel("New password").fill(owner.email);
    await page.getByText("Not accepted").waitFor();
    expect(await page.getByText("Very strong").count()).toBe(0);
    await page.getByLabel("New password").fill("password1234");
    await page.getByRole("button", { name: "Change password" }).click();
    const refusal = page.locator(".field-error");
    await refusal.first().waitFor();
    const sentence = (await refusal.allTextContents())[0];
    expect(await page.locator("main").textContent()).toSatisfy(
      (text: string) => text.split(sentence).length - 1 === 1,
    );
    // An account with a password is not told how to get one.
    expect(await page.getByText("no password yet", { exact: false }).count()).toBe(0);
    await h.shot(page, "40-password-refused", /status of 4\d\d .*\/account\/password\]/);
  }, 240_000);

  it("confirms a role change, says it is done, and offers the last owner no 'Leave'", async () => {
    const page = await h.signedInPage(owner.email);
    await page.goto(`${h.base}/console/projects/${project.id}`);
    await h.settled(page);
    const about = page.getByRole("region", { name: "About this project" });
    await about.getByText("You are this project's only owner").waitFor();
    expect(await about.getByRole("button", { name: "Leave this project" }).count()).toBe(0);

    await page.goto(`${h.base}/console/projects/${project.id}/team`);
    await h.settled(page);
    const select = page.getByLabel("Role of polish-partner");
    await select.selectOption("owner");
    const confirm = page.getByRole("dialog", { name: "Make polish-partner an owner?" });
    await confirm.getByText("an owner can do everything you can").waitFor();
    await h.shot(page, "41-team-role-confirm");
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect(await select.inputValue()).toBe("developer");
    const members = async () =>
      (await agent.get(`projects/${project.id}/members`)).json().data.members as Array<{
        accountId: number;
        role: string;
      }>;
    expect((await members()).find((m) => m.accountId === partner.id)?.role).toBe("developer");
    await select.selectOption("owner");
    await confirm.getByRole("button", { name: "Change role" }).click();
    await page.getByText("polish-partner is now an owner.").waitFor();
    expect((await members()).find((m) => m.accountId === partner.id)?.role).toBe("owner");

    // Two owners now: either may leave.
    await page.goto(`${h.base}/console/projects/${project.id}`);
    await h.settled(page);
    await page
      .getByRole("region", { name: "About this project" })
      .getByRole("button", { name: "Leave this project" })
      .waitFor();
    h.expectNoConsoleErrors(page, "team");
    expect(h.pageErrors).toEqual([]);
    expect(h.cspViolations).toEqual([]);
  }, 120_000);
});
