import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { callData } from "../../src/devnet/deploy.js";
import type { Devnet } from "../../src/devnet/devnet.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { senderFor, startPausedDevnet, waitFor } from "../crawler/crawler-harness.js";
import { createTestDatabase } from "../helpers/pg.js";
import {
  apiProcessEnv,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from "../helpers/server-process.js";
import { openFeed } from "../helpers/sse-client.js";

const CHILD = join(import.meta.dirname, "..", "crawler", "crawl-child.ts");
const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const BOUND_MS = 1_000;

/**
 * The change feed across processes: a crawler process and two API processes (OMNINAME_ROLES=api)
 * on one PostgreSQL database. The crawler's commit is heard by both API processes through the
 * change channel; each reads the event from the log by cursor and streams it.
 */
describe("the change feed on two API processes and a crawler process (one PostgreSQL)", () => {
  let db: { url: string; drop: () => Promise<void> };
  let devnet: Devnet;
  let dataDir: string;
  const dirs: string[] = [];
  let crawler: ChildProcess;
  let a: ServerProcess;
  let b: ServerProcess;
  let store: Store;
  let key: string;
  const feeds: Array<{ close(): void }> = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "omniname-feed-scale-"));
    devnet = await startPausedDevnet(dataDir, ["POLYGON"]);
    const pepper = randomBytes(16).toString("hex");
    const envOf = () => apiProcessEnv({ databaseUrl: db.url, pepper, dirs, name: "feed" });
    a = await startServerProcess(envOf());
    b = await startServerProcess(envOf());
    crawler = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: db.url,
        OMNINAME_ROLES: "crawler",
        LOG_LEVEL: "warn",
        CRAWLER_POLL_INTERVAL_MS: "50",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    store = await createStore({ databaseUrl: db.url, dataDir });
    const project = await store.projects.createProject({ name: "feed", plan: "internal" });
    key = (await createApiKey(store, pepper, project.id, "k")).key;
    await waitFor(
      async () => ((await store.crawlerLog.listCheckpoints()).length >= 2 ? true : null),
      60_000,
      "the crawler's first checkpoints",
    );
  }, 180_000);

  afterAll(async () => {
    for (const f of feeds) f.close();
    if (crawler && crawler.exitCode === null) {
      const exited = new Promise((r) => crawler.once("exit", r));
      crawler.kill("SIGTERM");
      await exited;
    }
    for (const s of [a, b]) if (s) await stopServerProcess(s);
    await store?.close();
    await devnet?.stop();
    await db?.drop();
    for (const d of [dataDir, ...dirs]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it("streams a change to the clients of both API processes within 1 s of the crawler's commit", async () => {
    const fa = openFeed(`${a.url}/svc/api/v1/changes?tlds=scale`, { "api-key": key });
    const fb = openFeed(`${b.url}/svc/api/v1/changes?tlds=scale`, { "api-key": key });
    feeds.push(fa, fb);
    await Promise.all([fa.opened, fb.opened]);
    const registry = sourcesFromManifest(devnet.manifest).find((s) => s.id === "fns-polygon")!.contracts
      .addresses.registry as Hex;
    const sender = await senderFor(devnet.manifest.networks.POLYGON!.rpcUrl);
    const lags: number[] = [];
    for (let i = 0; i < 3; i++) {
      await sender.send([{ to: registry, data: callData("FNSRegistry", "mint", [ALICE, `n${i}`, "scale"]) }]);
      const mined = Date.now();
      await sender.mine();
      const [ea, eb] = await Promise.all(
        [fa, fb].map((f) =>
          waitFor(async () => f.events[i] ?? null, 5_000, `event ${i} on ${f === fa ? "A" : "B"}`),
        ),
      );
      expect(ea.data).toMatchObject({ type: "domain.created", domain: `n${i}.scale` });
      expect(eb.id).toBe(ea.id);
      // `time` is when the crawler wrote the change (its transaction's start).
      for (const e of [ea, eb]) expect(e.at - Date.parse(e.data.time)).toBeLessThan(BOUND_MS);
      lags.push(ea.at - mined, eb.at - mined);
    }
    console.log(`block mined → SSE event on API process A and B, ms: ${JSON.stringify(lags)}`);
  });
});
