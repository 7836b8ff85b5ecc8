import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomPortBase } from "../../src/devnet/anvil.js";
import { bulkSeed } from "../../src/devnet/bulk-seed.js";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { pauseMining, resumeMining } from "../../src/devnet/tx-sender.js";

const CHILD = join(import.meta.dirname, "many-sources-child.ts");
const SOURCES = 24;

function runChild(dataDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, dataDir, String(SOURCES)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("a crawler of many sources", () => {
  let devnet: Devnet;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "omniname-warnings-"));
    devnet = await startDevnet({
      dataDir,
      persist: false,
      seed: false,
      blockTime: 0,
      logs: false,
      networks: ["POLYGON"],
      basePort: randomPortBase(),
    });
    const chains = await devnet.chains();
    // bulkSeed writes a batch a block: mining paused while it runs, automine again afterwards.
    await Promise.all(chains.map((c) => pauseMining(c.sender.rpc)));
    await bulkSeed(chains, { names: 300, batchSize: 10, runId: "warnings" });
    await Promise.all(chains.map((c) => resumeMining(c.sender.rpc, 0)));
  }, 120_000);
  afterAll(async () => {
    await devnet?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`runs ${SOURCES} sources to the head and stops without a single process warning`, async () => {
    const { code, stdout, stderr } = await runChild(dataDir);
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
      warnings: string[];
      states: string[];
    };
    expect(report.states).toEqual(Array(SOURCES).fill("stopped"));
    expect(report.warnings).toEqual([]);
  }, 120_000);
});
