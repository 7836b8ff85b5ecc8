// The web console in a real Chromium (Debian's /usr/bin/chromium driven by playwright-core): the
// whole app on a free loopback port, pages that record CSP reports, script errors and console
// errors, axe-core on every page photographed. Screenshots go to docs/console/ with
// UPDATE_SCREENSHOTS=1, else to a temporary directory, so `npm test` leaves the tree clean.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import type { Store } from "../../../src/store/store.js";
import { freePort } from "../../helpers/free-port.js";
import { CHROMIUM, launchChromium } from "./chromium.js";
import { type ConsoleTestApp, createConsoleTestApp, type Mail, PASSWORD } from "./console-app.js";

export { CHROMIUM };
export const hasChromium = existsSync(CHROMIUM);
export const repo = fileURLToPath(new URL("../../../", import.meta.url));
export const distDir = join(repo, "web", "dist");
const require = createRequire(import.meta.url);

export /** The console link of a mail (invitation, verification, reset). */
function linkOf(mail: Mail): string {
  const m = /https?:\/\/[^\s"<>]+\/console\/[a-z-]+\?token=[A-Za-z0-9_-]+/.exec(mail.text);
  if (!m) throw new Error(`no console link in mail: ${mail.text}`);
  return m[0];
}

export interface BrowserHarness {
  t: ConsoleTestApp;
  base: string;
  browser: Browser;
  cspViolations: string[];
  pageErrors: string[];
  /** Per page, what it printed to the browser console as errors since it was last checked. */
  consoleErrors: Map<Page, string[]>;
  /** Violations of any impact per page audited (all 0, or the audit failed). */
  audited: Record<string, number>;
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  settled(page: Page): Promise<void>;
  audit(page: Page, name: string): Promise<void>;
  expectNoConsoleErrors(page: Page, name: string, provoked?: RegExp): void;
  shot(page: Page, name: string, provoked?: RegExp): Promise<void>;
  signIn(page: Page, email: string, password?: string): Promise<void>;
  /** A new page signed in as `email`, on the page the sign-in leads to, its console errors cleared. */
  signedInPage(email: string): Promise<Page>;
  close(): Promise<void>;
}

/** Starts the app (built web console, SQLite, SMTP sink) and Chromium. */
export async function startBrowserHarness(
  before?: (t: ConsoleTestApp) => Promise<void>,
): Promise<BrowserHarness> {
  // CI builds before testing; a fresh tree gets the web build here (the stamps skip the rest).
  if (!existsSync(join(distDir, "index.html")))
    execFileSync(process.execPath, [join(repo, "scripts", "build.mjs")], { cwd: repo, stdio: "inherit" });
  const shotsDir =
    process.env.UPDATE_SCREENSHOTS === "1"
      ? join(repo, "docs", "console")
      : mkdtempSync(join(tmpdir(), "omniname-console-shots-"));
  mkdirSync(shotsDir, { recursive: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await createConsoleTestApp({ consoleDistDir: distDir, config: { publicUrl: base } });
  await before?.(t);
  await t.app.listen({ port, host: "127.0.0.1" });
  const browser = await launchChromium();
  const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  const contexts: BrowserContext[] = [];
  const h: BrowserHarness = {
    t,
    base,
    browser,
    cspViolations: [],
    pageErrors: [],
    consoleErrors: new Map(),
    audited: {},

    async newPage(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport, locale: "en-GB" });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
      contexts.push(context);
      const page = await context.newPage();
      const errors: string[] = [];
      h.consoleErrors.set(page, errors);
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) h.cspViolations.push(m.text());
        if (m.type() === "error") errors.push(`${m.text()} [${m.location().url}]`);
      });
      page.on("pageerror", (e) => h.pageErrors.push(String(e)));
      page.setDefaultTimeout(20_000); // generous: CI runs other test files beside this one
      return page;
    },

    /** Waits until no loading indicator is left. */
    async settled(page) {
      await page.locator("main h1").first().waitFor();
      await page.waitForFunction(() => document.querySelectorAll(".state-loading").length === 0);
    },

    /** axe-core on the page as it is: no violation of any impact. */
    async audit(page, name) {
      await h.settled(page);
      // Evaluated over the DevTools protocol, so the page's CSP (no inline script) does not block it.
      await page.evaluate(axeSource);
      const violations = await page.evaluate(async () => {
        const axe = (
          window as unknown as {
            axe: {
              run: (
                c: unknown,
                o: unknown,
              ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
            };
          }
        ).axe;
        const r = await axe.run(document, { resultTypes: ["violations"] });
        return r.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          targets: v.nodes.map((n) => n.target.join(" ")),
        }));
      });
      expect(violations, `axe on ${name}`).toEqual([]);
      h.audited[name] = violations.length;
    },

    /**
     * The console errors the page printed since the last check: none, but for the failed requests
     * the test provoked on purpose (`provoked`: e.g. the 401 of a wrong password, which Chromium
     * logs as "Failed to load resource" whatever the page does with the answer).
     */
    expectNoConsoleErrors(page, name, provoked) {
      const errors = h.consoleErrors.get(page) ?? [];
      const unexpected = errors.filter(
        (e) => !(provoked && /^Failed to load resource/.test(e) && provoked.test(e)),
      );
      errors.length = 0;
      expect(unexpected, `console errors on ${name}`).toEqual([]);
    },

    async shot(page, name, provoked) {
      await h.audit(page, name);
      h.expectNoConsoleErrors(page, name, provoked);
      await page.screenshot({ path: join(shotsDir, `${name}.png`) });
    },

    async signIn(page, email, password = PASSWORD) {
      await page.getByLabel("E-mail address").fill(email);
      await page.getByLabel("Password", { exact: true }).fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
    },

    async signedInPage(email) {
      const page = await h.newPage();
      await page.goto(`${base}/console/sign-in`);
      await h.signIn(page, email);
      await page.waitForURL((u) => !u.pathname.endsWith("/sign-in"));
      // The signed-out sign-in page's session probe (its own defect) is not the next page's error.
      h.consoleErrors.get(page)!.length = 0;
      return page;
    },

    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close();
      await t.close();
      if (process.env.UPDATE_SCREENSHOTS !== "1") rmSync(shotsDir, { recursive: true, force: true });
    },
  };
  return h;
}

/** Two names in two namespaces: a collision the settings can settle either way. */
export async function seedCollision(store: Store, now: number): Promise<void> {
  const base = {
    name: "shared.wallet",
    sld: "shared",
    tld: "wallet",
    resolver: null,
    registeredBlock: 1,
    expiresAt: null,
    lastUpdateBlock: 1,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
  };
  const rows = [
    {
      provider: "NAMESPACE_A" as const,
      network: "POLYGON" as const,
      owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
      baseScore: 75,
      registeredAt: now - 200 * 86_400_000,
    },
    {
      provider: "NAMESPACE_B" as const,
      network: "ETHEREUM" as const,
      owner: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
      baseScore: 60,
      registeredAt: now - 100 * 86_400_000,
    },
  ];
  for (const [i, r] of rows.entries()) {
    const id = await store.domainMap.upsertDomain({
      ...base,
      ...r,
      tokenId: `0x${String(i + 1).repeat(64)}`,
      contractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
      lastUpdateAt: r.registeredAt,
    });
    await store.domainMap.replaceRecords(id, [
      { key: "token.ETH.0", value: r.owner, nativeKey: "token.ETH.0", nativeValue: "x" },
    ]);
  }
}
