import type { Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Debian's Chromium through playwright-core (never a downloaded browser), headless, quiet. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}
