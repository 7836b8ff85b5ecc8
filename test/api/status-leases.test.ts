import Fastify from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { statusRoutes } from "../../src/api/routes/status.routes.js";
import type { SourceStatus } from "../../src/crawler/source-progress.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

const status = (id: string, state: SourceStatus["state"]): SourceStatus => ({
  id,
  provider: "UNS",
  network: "POLYGON",
  chainId: 137,
  state,
  head: 10,
  checkpoint: 5,
  lag: 5,
  eventsApplied: 0,
  eventsPerSecond: 0,
  etaSeconds: null,
  rangeSize: 1,
  error: null,
  updatedAt: 0,
});

describe.each(STORE_BACKENDS)("GET /status with source leases on $name", ({ open }) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ store, cleanup } = await open());
  });
  afterEach(() => cleanup());

  it("shows per source who holds it and whether this process writes or stands by", async () => {
    const now = Date.now();
    await store.crawlerLog.acquireSourceLease("uns-polygon", "crawler-a", now, 60_000);
    await store.crawlerLog.acquireSourceLease("fns-polygon", "crawler-b", now, 60_000);
    await store.crawlerLog.acquireSourceLease("ens-ethereum", "crawler-c", now - 120_000, 60_000); // expired
    await store.crawlerLog.setCheckpoint({
      sourceId: "ens-ethereum",
      chainId: 1,
      blockNumber: 3,
      blockHash: "0x03",
      updatedAt: now,
      state: "live",
      error: null,
    });
    const crawler = {
      status: () => [
        { ...status("uns-polygon", "backfill"), lease: { holder: "crawler-a", role: "writer" as const } },
        { ...status("fns-polygon", "standby"), lease: { holder: "crawler-b", role: "standby" as const } },
      ],
    };
    const app = Fastify();
    await app.register(statusRoutes, { store, crawler });
    try {
      const res = await app.inject({ method: "GET", url: "/status" });
      expect(res.statusCode).toBe(200);
      const sources = (res.json() as { data: { sources: Array<Record<string, unknown>> } }).data.sources;
      expect(sources.map((s) => [s.id, s.state, s.holder, s.role, s.inProcess])).toEqual([
        ["uns-polygon", "backfill", "crawler-a", "writer", true],
        ["fns-polygon", "standby", "crawler-b", "standby", true],
        ["ens-ethereum", "live", null, null, false],
      ]);
    } finally {
      await app.close();
    }
  });
});
