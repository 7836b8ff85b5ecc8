import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bulkSeed } from "../../src/devnet/bulk-seed.js";
import type { Devnet } from "../../src/devnet/devnet.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { pauseMining, resumeMining } from "../../src/devnet/tx-sender.js";
import { createStore } from "../../src/store/create-store.js";
import { exportSnapshot } from "../../src/store/snapshot.js";
import { createTestDatabase } from "../helpers/pg.js";
import { startBareChain } from "../helpers/bare-chain.js";

// `omniname crawl` as a child process (the crawler role, on the devnet of DATA_DIR/devnet.json).
const CHILD = join(import.meta.dirname, "..", "crawler", "crawl-child.ts");
/**
 * Names seeded: 25,000 names in batches of 50 are the 100,000-event backfill (100,004
 * events over 50 blocks of 10 transactions; seeding ~10 s, a clean crawl ~10 s, the whole test
 * ~45 s here). FAILOVER_NAMES=1500 runs the former small one (6,004 events, batches of 5).
 */
const NAMES = Number(process.env.FAILOVER_NAMES ?? 25_000);
const BATCH = NAMES >= 10_000 ? 50 : 5;
/** Timeouts grow with the backfill. */
const SCALE = Math.max(1, NAMES / 1_500);

interface Crawler {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * The snapshot export of a database as sorted lines, wall-clock timestamps aside (`exportedAt`,
 * a checkpoint's `updatedAt`): the order of the sources' interleaved writes differs between runs.
 */
async function snapshotOf(url: string, dir: string, name: string): Promise<string[]> {
  const store = await createStore({ databaseUrl: url, dataDir: dir });
  const file = join(dir, `${name}.jsonl`);
  try {
    await exportSnapshot(store, file);
  } finally {
    await store.close();
  }
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const o = JSON.parse(l) as Record<string, unknown>;
      // Wall-clock times only: the domains' times are the chain's (block times) and must be equal.
      delete o.exportedAt;
      delete o.updatedAt;
      return JSON.stringify(o);
    })
    .sort();
}

describe("crawler failover (two crawler processes on one PostgreSQL database)", () => {
  let devnet: Devnet;
  let dataDir: string;
  let events = 0;
  const dbs: Array<{ url: string; drop: () => Promise<void> }> = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "omniname-failover-"));
    devnet = await startBareChain(dataDir);
    const rpc = devnetRpc(devnet.manifest.networks.POLYGON!.rpcUrl);
    await pauseMining(rpc);
    const report = await bulkSeed(await devnet.chains(), {
      names: NAMES,
      batchSize: BATCH,
      runId: "failover",
    });
    events = report.events;
    process.stderr.write(
      `crawler failover: seeded ${report.events} events in ${report.blocks} blocks in ${report.durationMs} ms\n`,
    );
    await resumeMining(rpc, 0);
  }, 120_000 * Math.min(SCALE, 5));
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await devnet?.stop();
    for (const db of dbs) await db.drop().catch(() => {});
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  function crawl(url: string, instance: string): Crawler {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, "--exit-when-synced"], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: url,
        INSTANCE_ID: instance,
        OMNINAME_ROLES: "crawler",
        LOG_LEVEL: process.env.FAILOVER_LOG ?? "warn",
        // Small ranges: the backfill is many transactions, so the kill lands in its middle.
        CRAWLER_MAX_RANGE: "2",
        CRAWLER_INITIAL_RANGE: "2",
        CRAWLER_POLL_INTERVAL_MS: "100",
      },
      stdio: ["ignore", process.env.FAILOVER_LOG ? "inherit" : "ignore", "pipe"],
    });
    children.push(child);
    let err = "";
    child.stderr?.on("data", (c) => {
      err += c;
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once("exit", (code) => {
        if (code !== 0 && code !== null) process.stderr.write(`${instance}: ${err}`);
        resolve(code);
      }),
    );
    return { child, exited };
  }

  it(
    "hands every source to the standby within 5 s of a kill -9, which finishes with a clean run's snapshot",
    async () => {
      expect(events).toBeGreaterThanOrEqual(NAMES * 3.3);
      const sources = sourcesFromManifest(devnet.manifest).map((s) => s.id);
      const rpcUrl = devnet.manifest.networks.POLYGON!.rpcUrl;
      const head = Number(await devnetRpc(rpcUrl).call<string>("eth_blockNumber"));

      // The reference: one crawler alone, from scratch to the head.
      const refDb = await createTestDatabase();
      dbs.push(refDb);
      const t0 = Date.now();
      expect(await crawl(refDb.url, "alone").exited).toBe(0);
      process.stderr.write(`crawler failover: the clean run took ${Date.now() - t0} ms\n`);
      const expected = await snapshotOf(refDb.url, dataDir, "reference");

      const db = await createTestDatabase();
      dbs.push(db);
      const watch = new pg.Client({ connectionString: db.url });
      const leases = async () => {
        try {
          const r = await watch.query<{ source_id: string; holder: string }>(
            "select source_id, holder from source_leases where expires_at >= $1",
            [Date.now()],
          );
          return r.rows;
        } catch {
          return []; // the tables are not there yet
        }
      };
      const minCheckpoint = async () => {
        try {
          const r = await watch.query<{ n: string }>("select min(block_number) as n from checkpoints");
          return r.rows[0]?.n === null ? -1 : Number(r.rows[0]?.n);
        } catch {
          return -1;
        }
      };
      const poll = async <T>(
        check: () => Promise<T | false>,
        what: string,
        timeoutMs: number,
      ): Promise<T> => {
        const until = Date.now() + timeoutMs;
        while (Date.now() < until) {
          const v = await check();
          if (v !== false) return v;
          await new Promise((r) => setTimeout(r, 20));
        }
        throw new Error(`timed out waiting for ${what}`);
      };
      await watch.connect();
      try {
        // A starts first and takes every source; B starts and stands by.
        const a = crawl(db.url, "crawler-a");
        await poll(
          async () => {
            const l = await leases();
            return l.length === sources.length && l.every((x) => x.holder === "crawler-a");
          },
          "crawler-a to hold every source",
          60_000,
        ).then((ok) => expect(ok).toBe(true));
        // A is frozen while B starts, so that A cannot finish the whole backfill before the kill
        // on a fast machine. Frozen past its row's TTL, A keeps its sources: its advisory lock
        // (its session is alive) wins over the expired row, so B stands by.
        a.child.kill("SIGSTOP");
        const before = await minCheckpoint();
        const b = crawl(db.url, "crawler-b");
        // B is up (its migrations ran, it tried the leases) once it has had a few seconds.
        await new Promise((r) => setTimeout(r, 4_000));
        const held = await watch.query<{ holder: string }>("select holder from source_leases");
        expect(held.rows.map((x) => x.holder)).toEqual(sources.map(() => "crawler-a"));
        a.child.kill("SIGCONT");

        // Kill A in the middle of the backfill.
        await poll(
          async () => (await minCheckpoint()) >= Math.max(before, head * 0.4) || false,
          "A's backfill",
          60_000 * Math.min(SCALE, 5),
        );
        const killedAt = Date.now();
        a.child.kill("SIGKILL");
        expect(await a.exited).toBeNull();
        const atKill = await minCheckpoint();
        expect(atKill).toBeLessThan(head);

        await poll(
          async () => {
            const l = await leases();
            return l.length === sources.length && l.every((x) => x.holder === "crawler-b");
          },
          "crawler-b to take every source",
          10_000,
        );
        const takeoverMs = Date.now() - killedAt;
        process.stderr.write(
          `crawler failover: ${events} events, ${head} blocks; killed at block ${atKill}; takeover in ${takeoverMs} ms\n`,
        );
        expect(takeoverMs).toBeLessThan(5_000);

        const tb = Date.now();
        expect(await b.exited).toBe(0);
        process.stderr.write(
          `crawler failover: B finished the backfill ${Date.now() - tb} ms after the takeover\n`,
        );
      } finally {
        await watch.end();
      }
      expect(await snapshotOf(db.url, dataDir, "failover")).toEqual(expected);
    },
    180_000 * Math.min(SCALE, 5),
  );
});
