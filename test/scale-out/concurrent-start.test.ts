import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/devnet/devnet.js";
import { createStore } from "../../src/store/create-store.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/pg.js";
import { type OutputProcess, spawnWithOutput } from "../helpers/processes.js";
import {
  apiRoleEnv,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from "../helpers/server-process.js";
import { startBareChain } from "../helpers/bare-chain.js";

/**
 * A deploy of several replicas on a new database: six processes (four API, two crawlers) started
 * at the same moment all come up, and the migrations ran once each. Before migrations were
 * serialized, a process exited with `duplicate key value violates unique constraint
 * "omniname_migrations_pkey"` (PostgreSQL) or a busy or half-made schema (SQLite).
 */
const CRAWL_CHILD = join(import.meta.dirname, "..", "crawler", "crawl-child.ts");
const API_PROCESSES = 4;
const CRAWLERS = 2;

function startCrawler(env: NodeJS.ProcessEnv): OutputProcess {
  return spawnWithOutput(["--import", "tsx", CRAWL_CHILD], { env });
}

/** Waits until `check` holds, polling; throws with `what` after `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("six processes started together on a new database", () => {
  let devnet: Devnet;
  let chainDir: string;
  const dirs: string[] = [];
  const dbs: Array<{ drop: () => Promise<void> }> = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // One chain whose manifest the crawler processes read (DATA_DIR/devnet.json), not seeded:
    // what is tested is the start, not the crawl.
    chainDir = mkdtempSync(join(tmpdir(), "omniname-concurrent-chain-"));
    devnet = await startBareChain(chainDir);
  }, 120_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await devnet?.stop();
    for (const db of dbs) await db.drop().catch(() => {});
    for (const d of [chainDir, ...dirs]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const stores = [
    {
      name: "PostgreSQL",
      async database(): Promise<string> {
        const db = await createTestDatabase();
        dbs.push(db);
        return db.url;
      },
    },
    {
      name: "SQLite (one file)",
      async database(): Promise<string> {
        const dir = mkdtempSync(join(tmpdir(), "omniname-concurrent-sqlite-"));
        dirs.push(dir);
        return `sqlite:${join(dir, "omniname.db")}`;
      },
    },
  ];

  for (const backend of stores) {
    it(`every process comes up, and each migration ran once (${backend.name})`, async () => {
      const databaseUrl = await backend.database();
      const dataDir = mkdtempSync(join(tmpdir(), "omniname-concurrent-"));
      dirs.push(dataDir);
      const apiEnv = apiRoleEnv(dataDir, { DATABASE_URL: databaseUrl, API_KEY_PEPPER: "concurrent-start" });
      const crawlerEnv: NodeJS.ProcessEnv = {
        ...process.env,
        DATA_DIR: chainDir,
        DATABASE_URL: databaseUrl,
        OMNINAME_ROLES: "crawler",
        LOG_LEVEL: "warn",
        CRAWLER_POLL_INTERVAL_MS: "100",
      };
      // All six are spawned before any is awaited: their migrations overlap.
      const t0 = Date.now();
      const crawlers = Array.from({ length: CRAWLERS }, (_, i) =>
        startCrawler({ ...crawlerEnv, INSTANCE_ID: `crawler-${i}` }),
      );
      for (const c of crawlers) children.push(c.child);
      const starting = Array.from({ length: API_PROCESSES }, () => startServerProcess(apiEnv, [], 90_000));
      const apis: ServerProcess[] = [];
      const results = await Promise.allSettled(starting);
      for (const r of results) if (r.status === "fulfilled") apis.push(r.value);
      for (const a of apis) children.push(a.child);
      process.stderr.write(
        `concurrent start (${backend.name}): ${apis.length} API processes up in ${Date.now() - t0} ms\n`,
      );
      const failures = results.filter((r) => r.status === "rejected").map((r) => String(r.reason));
      expect(failures).toEqual([]);

      let store: Store | null = null;
      try {
        store = await createStore({ databaseUrl, dataDir });
        const s = store;
        // The crawlers: running, and every source of the chain checkpointed by one of them.
        await until(
          async () => (await s.crawlerLog.listCheckpoints()).length > 0,
          "the crawlers' first checkpoints",
          60_000,
        );
        process.stderr.write(
          `concurrent start (${backend.name}): first checkpoint after ${Date.now() - t0} ms\n`,
        );
        for (const c of crawlers) expect(c.child.exitCode, c.output()).toBeNull();
        for (const a of apis) {
          const res = await fetch(`${a.url}/readyz`);
          expect([200, 503]).toContain(res.status); // lag may be unknown: the point is an answer
          const health = await fetch(`${a.url}/healthz`);
          expect(health.status).toBe(200);
        }
        for (const c of crawlers) expect(c.output()).not.toMatch(/duplicate key|SQLITE_BUSY|already exists/);
        for (const a of apis) expect(a.output()).not.toMatch(/duplicate key|SQLITE_BUSY|already exists/);
        expect(await migrationRows(store)).toBe(MIGRATIONS.length);
      } finally {
        await store?.close();
        await Promise.all(apis.map((a) => stopServerProcess(a)));
        for (const c of crawlers) c.child.kill("SIGTERM");
        await Promise.all(
          crawlers.map((c) =>
            c.child.exitCode !== null ? null : new Promise((r) => c.child.once("exit", r)),
          ),
        );
      }
    }, 180_000);
  }
});

/** The rows of the migrations table: one per migration, whoever applied it. */
async function migrationRows(store: Store): Promise<number> {
  // The backend's own handle (not part of the port): the migrations table is no port's concern.
  const db = (store as unknown as { db: Kysely<unknown> }).db;
  const r = await sql<{ n: number }>`select count(*) as n from omniname_migrations`.execute(db);
  return Number(r.rows[0]?.n);
}
