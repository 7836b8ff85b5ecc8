import Fastify from "fastify";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pingRedis } from "../../src/accounts/console-services.js";
import { healthRoutes } from "../../src/api/routes/health.routes.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

const NOW = 1_800_000_000_000;
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

const checkpoint = (sourceId: string, blockNumber: number) => ({
  sourceId,
  chainId: 137,
  blockNumber,
  blockHash: `0x${blockNumber.toString(16)}`,
  updatedAt: NOW,
  state: "live",
  error: null,
});

describe.each(STORE_BACKENDS)("GET /readyz on $name", ({ open }) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ store, cleanup } = await open());
  });
  afterEach(() => cleanup());

  async function readyz(redisHealth?: () => Promise<"up" | "down">) {
    const app = Fastify();
    healthRoutes(app, store, { clock: () => NOW, ...(redisHealth ? { redisHealth } : {}) });
    try {
      const res = await app.inject({ url: "/readyz" });
      expect(res.statusCode).toBe(200);
      return res.json().data;
    } finally {
      await app.close();
    }
  }

  it("reports per source the writer's head, the indexed block, the lag and the seconds behind, read from the store", async () => {
    // Caught up: head 100, indexed 100.
    await store.crawlerLog.setCheckpoint(checkpoint("uns-polygon", 100));
    await store.crawlerLog.acquireSourceLease("uns-polygon", "crawler-a", NOW - 500, 3_000);
    await store.crawlerLog.reportSourceProgress("uns-polygon", "crawler-a", {
      head: 100,
      syncedAt: NOW - 500,
      now: NOW - 500,
    });
    // Behind: head 250, indexed 200, last at the head 12.3 s ago.
    await store.crawlerLog.setCheckpoint(checkpoint("fns-polygon", 200));
    await store.crawlerLog.acquireSourceLease("fns-polygon", "crawler-b", NOW - 1_000, 3_000);
    await store.crawlerLog.reportSourceProgress("fns-polygon", "crawler-b", {
      head: 250,
      syncedAt: NOW - 12_300,
      now: NOW - 1_000,
    });
    // A report by another process than the holder is ignored.
    await store.crawlerLog.reportSourceProgress("fns-polygon", "intruder", {
      head: 1,
      syncedAt: NOW,
      now: NOW,
    });
    // A writer that died: its lease expired, its last report stays.
    await store.crawlerLog.setCheckpoint(checkpoint("ens-ethereum", 40));
    await store.crawlerLog.acquireSourceLease("ens-ethereum", "crawler-c", NOW - 60_000, 3_000);
    await store.crawlerLog.reportSourceProgress("ens-ethereum", "crawler-c", {
      head: 45,
      syncedAt: null,
      now: NOW - 60_000,
    });
    // No writer ever reported.
    await store.crawlerLog.setCheckpoint(checkpoint("sid-bsc", 7));

    const data = await readyz();
    expect(data.status).toBe("ready");
    expect(data.store).toBe("up");
    expect(data.redis).toBeUndefined();
    const byId = Object.fromEntries(data.sources.map((s: { id: string }) => [s.id, s]));
    expect(byId["uns-polygon"]).toEqual({
      id: "uns-polygon",
      state: "live",
      head: 100,
      indexed: 100,
      lag: 0,
      secondsBehind: 0,
      holder: "crawler-a",
      reportedSecondsAgo: 0.5,
    });
    expect(byId["fns-polygon"]).toMatchObject({
      head: 250,
      indexed: 200,
      lag: 50,
      secondsBehind: 12.3,
      holder: "crawler-b",
    });
    expect(byId["ens-ethereum"]).toMatchObject({
      head: 45,
      indexed: 40,
      lag: 5,
      secondsBehind: null,
      holder: null,
      reportedSecondsAgo: 60,
    });
    expect(byId["sid-bsc"]).toMatchObject({
      head: null,
      indexed: 7,
      lag: null,
      secondsBehind: null,
      holder: null,
    });
  });

  it("reports Redis up or down when the process has Redis, and nothing about it otherwise", async () => {
    expect((await readyz(async () => "up")).redis).toBe("up");
    expect((await readyz(async () => "down")).redis).toBe("down");
    expect(await readyz()).not.toHaveProperty("redis");
  });
});

describe("pingRedis", () => {
  it("is up against a real Redis and down against a closed port, within its timeout", async () => {
    const up = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    const down = new Redis("redis://127.0.0.1:1", {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: false,
    });
    down.on("error", () => {});
    try {
      await new Promise((r) => up.once("ready", r));
      expect(await pingRedis(up, 500)).toBe("up");
      const t0 = Date.now();
      expect(await pingRedis(down, 500)).toBe("down");
      expect(Date.now() - t0).toBeLessThan(2_000);
    } finally {
      up.disconnect();
      down.disconnect();
    }
  });
});
