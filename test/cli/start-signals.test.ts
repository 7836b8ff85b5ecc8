import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiRoleEnv } from "../helpers/server-process.js";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

/**
 * `omniname start` (the API role on SQLite) sent SIGTERM in the same moment its stdout shows
 * "omniname is up", as a supervisor or a test that waits for the banner does. Its exit code and
 * signal, and whether it logged its shutdown.
 */
async function stopOnBanner(): Promise<{ code: number | null; signal: string | null; shutdown: boolean }> {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-start-signal-"));
  try {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, "start"], {
      env: apiRoleEnv(dataDir, { DATABASE_URL: "", LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const read = (d: Buffer) => {
      out += d;
      if (!child.killed && out.includes("omniname is up")) child.kill("SIGTERM");
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.once("exit", (c, s) => resolve([c, s])),
    );
    return { code, signal, shutdown: out.includes("shutting down") };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe("omniname start and SIGTERM", () => {
  // Before the banner was written after the handlers, about 5 starts in 8 died of the signal's
  // default action here (no shutdown: a devnet's chain state not saved); three at once make a
  // return of that race all but certain to show.
  it("stops cleanly when the signal comes the moment the banner is read", async () => {
    const runs = await Promise.all([stopOnBanner(), stopOnBanner(), stopOnBanner()]);
    expect(runs).toEqual(Array(3).fill({ code: 0, signal: null, shutdown: true }));
  }, 60_000);
});
