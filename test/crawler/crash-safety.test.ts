import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crawlSignals } from "../../src/cli/crawler-role.js";
import { loadConfig } from "../../src/config/load-config.js";
import { loadScoringLists } from "../../src/scoring/scoring-lists.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { bulkSeed } from "../../src/devnet/bulk-seed.js";
import { createRng } from "../../src/devnet/fixture-values.js";
import type { Devnet } from "../../src/devnet/devnet.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { pauseMining, resumeMining } from "../../src/devnet/tx-sender.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { crawlToHead, dumpStore, tempStore } from "./crawler-harness.js";
import { startBareChain } from "../helpers/bare-chain.js";

const CHILD = join(import.meta.dirname, "crawl-child.ts");

describe("crash safety", () => {
  let devnet: Devnet;
  let dataDir: string;
  let events = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "omniname-crash-"));
    devnet = await startBareChain(dataDir);
    const rpc = devnetRpc(devnet.manifest.networks.POLYGON!.rpcUrl);
    await pauseMining(rpc);
    // Small batches spread the names over many blocks, so a backfill is many transactions.
    const report = await bulkSeed(await devnet.chains(), { names: 2_600, batchSize: 5, runId: "crash" });
    events = report.events;
    await resumeMining(rpc, 0);
  });
  afterAll(async () => {
    await devnet?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("ends, after 10 SIGKILLs at random points of a backfill and restarts, with the store of an uninterrupted crawl", async () => {
    expect(events).toBeGreaterThanOrEqual(10_000);
    const reference = await tempStore();
    try {
      // The same scoring as `omniname crawl` applies, so that the two stores can be compared.
      const signals = crawlSignals(
        await loadScoringLists(loadConfig({}, { dataDir }), await reference.store.scoring.findKycOwners()),
      );
      await crawlToHead(reference.store, sourcesFromManifest(devnet.manifest), {
        sync: { maxRange: 1 },
        signals,
      });
      const expected = await dumpStore(reference.store);

      const env = {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: `sqlite:${join(dataDir, "crash.db")}`,
        LOG_LEVEL: "info",
        // One stable name for every restart: a restarted crawler takes its own source leases back at
        // once instead of waiting for the killed process's leases to expire (source-lease.ts).
        INSTANCE_ID: "crash-safety",
        // One block a range: every block is its own transaction, so kills land between and inside them.
        CRAWLER_MAX_RANGE: "1",
        CRAWLER_INITIAL_RANGE: "1",
        CRAWLER_POLL_INTERVAL_MS: "100",
      };
      const run = (): { child: ChildProcess; exited: Promise<number | null> } => {
        const child = spawn(process.execPath, ["--import", "tsx", CHILD, "--exit-when-synced"], {
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let err = "";
        child.stderr?.on("data", (c) => {
          err += c;
        });
        child.stdout?.resume();
        const exited = new Promise<number | null>((resolve) =>
          child.once("exit", (code) => {
            if (code !== 0 && code !== null) process.stderr.write(err);
            resolve(code);
          }),
        );
        return { child, exited };
      };

      // Ten random points of the backfill: each run is killed once the slower source passes its
      // block, plus a random few milliseconds so that kills also land inside a range's work.
      const random = createRng(Number(process.env.CRASH_SEED ?? 2026));
      const rpcUrl = devnet.manifest.networks.POLYGON!.rpcUrl;
      const head = Number(await devnetRpc(rpcUrl).call<string>("eth_blockNumber"));
      const targets = Array.from({ length: 10 }, () => 2 + Math.floor(random() * (head - 3))).sort(
        (a, b) => a - b,
      );
      const reader = new BetterSqlite3(join(dataDir, "crash.db"), { readonly: false });
      const progress = () => {
        try {
          const rows = reader.prepare("select block_number from checkpoints").all() as Array<{
            block_number: number;
          }>;
          return rows.length < 2 ? -1 : Math.min(...rows.map((r) => Number(r.block_number)));
        } catch {
          return -1; // the first child has not created the tables yet
        }
      };
      const checkpoints: number[] = [];
      try {
        for (const target of targets) {
          const { child, exited } = run();
          let done = false;
          void exited.then(() => {
            done = true;
          });
          while (!done && progress() < target) await new Promise((r) => setTimeout(r, 5));
          await new Promise((r) => setTimeout(r, Math.floor(random() * 30)));
          child.kill("SIGKILL");
          await exited;
          checkpoints.push(progress());
        }
      } finally {
        reader.close();
      }
      const last = run();
      expect(await last.exited).toBe(0);

      const crashed = createSqliteStore(join(dataDir, "crash.db"));
      await crashed.migrate();
      try {
        expect(await dumpStore(crashed)).toEqual(expected);
      } finally {
        await crashed.close();
      }
      // The kills did land inside the backfill, not only before or after it.
      const midway = checkpoints.filter((c) => c > 0 && c < head);
      expect(new Set(midway).size).toBeGreaterThanOrEqual(5);
    } finally {
      await reference.cleanup();
    }
    // Each child boots tsx (~3 s on this machine) before it crawls.
  }, 240_000);
});
