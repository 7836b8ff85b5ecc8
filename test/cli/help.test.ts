import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

/**
 * `omniname … --help` prints the help and does nothing else, for every command and after a
 * subcommand: before, `omniname devnet simulate --help` started simulating on the devnet of
 * ./data (starting one when none ran). The DATA_DIR given stays as it was: nothing created.
 */
describe("omniname <command> --help", () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "omniname-help-")), "data");
  afterAll(() => rmSync(join(dataDir, ".."), { recursive: true, force: true }));

  it.each([
    "devnet simulate --help",
    "devnet --help",
    "start -h",
    "keys create --project demo --help",
    "snapshot import missing.jsonl --help",
    "dns-worker --help",
  ])("omniname %s", async (line) => {
    const argv = line.split(" ");
    const { stdout } = await run(process.execPath, ["--import", "tsx", MAIN, ...argv], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "" },
      timeout: 30_000,
    });
    expect(stdout).toMatch(new RegExp(`^usage:[\\s\\S]*omniname ${argv[0]}`));
    expect(existsSync(dataDir) ? readdirSync(dataDir) : []).toEqual([]);
  });
});
