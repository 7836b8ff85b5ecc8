import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../crawler/crawler-harness.js";
import { event, get } from "./helpers/change-feed.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";

describe("the change feed under load", () => {
  let t: TestApp;
  let base: string;
  const registry = new Registry();
  const V1 = "/svc/api/v1/changes";

  beforeAll(async () => {
    t = await createTestApp({
      config: { changesHeartbeatMs: 500, changesStallMs: 300, changesMaxClients: 1_000 },
      app: { console: false, metricsRegistry: registry },
    });
    base = await t.app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => t?.close());

  it("disconnects a client that stops reading, and holds 1,000 clients at once that all get an event", async () => {
    const socket = connect(Number(new URL(base).port), "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    socket.write(`GET ${V1} HTTP/1.1\r\nHost: 127.0.0.1\r\napi-key: ${t.key}\r\n\r\n`);
    socket.pause();
    const closed = new Promise((r) => socket.once("close", r));
    await waitFor(
      async () => ((await metric("omniname_feed_clients")) >= 1 ? true : null),
      5_000,
      "the client",
    );
    // About 128 MB of events: more than the socket buffers hold for a reader that reads nothing
    // (loopback autotunes the receiver's up to tcp_rmem's 32 MB here, and the sender's 4 MB; the
    // kernel's accounting lets more in than that, so the margin is wide).
    for (let i = 0; i < 16; i++)
      await t.store.changeLog.appendChangeEvents(Array.from({ length: 125 }, (_, k) => event(k, 64_000)));
    await waitFor(
      async () => ((await metric("omniname_feed_clients")) === 0 ? true : null),
      60_000,
      "the drop",
    );
    socket.resume();
    await closed;

    const before = process.memoryUsage().rss;
    const open = () => {
      let got = "";
      let connected!: () => void;
      const up = new Promise<void>((r) => {
        connected = r;
      });
      const seen = new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          `${base}${V1}?types=domain.removed`,
          { headers: { "api-key": t.key } },
          (res) => {
            connected();
            res.on("data", (c) => {
              got += c;
              if (got.includes("event: domain.removed")) resolve();
            });
          },
        );
        req.on("error", reject);
        req.end();
      });
      seen.catch(() => {}); // awaited below; a failure fails Promise.all
      return { up, seen };
    };
    // Connected 100 at a time: a burst of 1,000 SYNs at once overflows the listen backlog of a
    // loaded machine, which is about accepting, not about holding streams.
    const clients: Array<Promise<void>> = [];
    for (let i = 0; i < 10; i++) {
      const batch = Array.from({ length: 100 }, open);
      await Promise.all(batch.map((c) => c.up));
      clients.push(...batch.map((c) => c.seen));
    }
    await waitFor(
      async () => ((await metric("omniname_feed_clients")) === 1_000 ? true : null),
      30_000,
      "1,000 clients",
    );
    const held = process.memoryUsage().rss - before;
    await t.store.changeLog.appendChangeEvents([{ ...event(9), type: "domain.removed" }]);
    const sent = Date.now();
    await Promise.all(clients);
    console.log(
      `1,000 clients: ${Math.round(held / 1e6)} MB RSS (server and clients in one process); the event reached all in ${Date.now() - sent} ms`,
    );
    // One stream more than CHANGES_MAX_CLIENTS (1,000 here) is refused.
    const busy = await get(base, V1, { "api-key": t.key });
    expect(busy.status).toBe(503);
    expect(JSON.parse(busy.body).error.code).toBe("FEED_BUSY");
  }, 150_000);

  async function metric(name: string): Promise<number> {
    const m = await registry.getSingleMetric(name)?.get();
    return m?.values[0]?.value ?? -1;
  }
});
