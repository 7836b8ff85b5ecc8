import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../crawler/crawler-harness.js";
import { openFeed } from "../helpers/sse-client.js";
import { event, get } from "./helpers/change-feed.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";

describe("the change feed's refusals and limits", () => {
  let t: TestApp;
  let base: string;
  const V1 = "/svc/api/v1/changes";

  beforeAll(async () => {
    t = await createTestApp({
      config: { changesHeartbeatMs: 500, changesStallMs: 300, changesMaxClients: 10 },
    });
    base = await t.app.listen({ host: "127.0.0.1", port: 0 });
    await t.store.changeLog.appendChangeEvents([1, 2, 3].map((i) => event(i)));
  });
  afterAll(async () => t?.close());

  it.each([
    ["no key", V1, {}, 401, "API_KEY_MISSING"],
    ["a wrong key", V1, { "api-key": "on_live_wrong" }, 401, "API_KEY_INVALID"],
    ["an unknown network", `${V1}?networks=POLYGON,MARS`, null, 400, "INVALID_PARAMETER"],
    ["an unknown type", `${V1}?types=domain.renamed`, null, 400, "INVALID_PARAMETER"],
    ["an invalid domain", `${V1}?domains=a..b`, null, 400, "INVALID_PARAMETER"],
    ["a repeated filter", `${V1}?tlds=a&tlds=b`, null, 400, "INVALID_PARAMETER"],
    ["a cursor that is no number", `${V1}?after=1e5`, null, 400, "INVALID_PARAMETER"],
    ["a negative cursor", `${V1}?after=-1`, null, 400, "INVALID_PARAMETER"],
    [
      "1,001 filter values",
      `${V1}?tlds=${Array.from({ length: 1_001 }, (_, i) => `t${i}`).join(",")}`,
      null,
      400,
      "PARAMETER_TOO_LONG",
    ],
  ])("refuses %s before the stream opens", async (_what, path, headers, status, code) => {
    const r = await get(base, path, headers ?? { "api-key": t.key });
    expect(r.status).toBe(status);
    expect(JSON.parse(r.body).error.code).toBe(code);
  });

  it("takes 1,000 filter values, and refuses a URL too long for the server with a 4xx", async () => {
    const tlds = Array.from({ length: 1_000 }, (_, i) => `t${i}`).join(",");
    const ok = await get(base, `${V1}?tlds=limits,${tlds.slice(0, tlds.lastIndexOf(","))}`, {
      "api-key": t.key,
    });
    expect(ok.status).toBe(200);
    const addresses = Array.from({ length: 1_000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`).join(
      ",",
    );
    const long = await get(base, `${V1}?addresses=${addresses}`, { "api-key": t.key });
    expect(long.status).toBeGreaterThanOrEqual(400);
    expect(long.status).toBeLessThan(500);
  });

  it("sends a feed.error event for a cursor from the future or older than the retention window", async () => {
    const { newest } = await t.store.changeLog.changeLogBounds();
    const future = openFeed(`${base}${V1}?after=${newest + 1_000}`, { "api-key": t.key });
    const e1 = await waitFor(async () => future.events[0] ?? null, 5_000, "the future cursor's error");
    future.close();
    expect(e1).toMatchObject({ type: "feed.error", data: { code: "CURSOR_FROM_FUTURE" } });

    expect(await t.store.changeLog.pruneChangeEvents(Date.now() + 1, 1)).toBe(1);
    const expired = openFeed(`${base}${V1}`, { "api-key": t.key, "last-event-id": "0" });
    const e2 = await waitFor(async () => expired.events[0] ?? null, 5_000, "the expired cursor's error");
    expired.close();
    expect(e2).toMatchObject({ type: "feed.error", data: { code: "CURSOR_EXPIRED" } });
    expect(e2.data.message).toMatch(/retention window/);
  });

  it("sends heartbeats carrying the cursor on an idle stream", async () => {
    const { newest } = await t.store.changeLog.changeLogBounds();
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${base}${V1}?tlds=none`, { headers: { "api-key": t.key } }, (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
          if (body.split(": heartbeat").length > 2) {
            req.destroy();
            resolve(body);
          }
        });
      });
      req.on("error", reject);
      req.end();
    });
    expect(text).toContain(`: heartbeat\nid: ${newest}\n\n`);
  });

  it("ends a stream at its next heartbeat when the key's scope loses the feed", async () => {
    const { key, id } = await t.services.projects.createKey(t.projectId, {
      name: "feed",
      endpoints: ["changes"],
    });
    const feed = openFeed(`${base}${V1}?tlds=none`, { "api-key": key });
    try {
      await feed.opened;
      await t.services.projects.updateKey(t.projectId, id, { endpoints: ["resolve"] });
      const refused = await waitFor(
        async () => feed.events.find((e) => e.type === "feed.error") ?? null,
        10_000,
        "the feed.error",
      );
      expect(refused.data.code).toBe("ENDPOINT_NOT_ALLOWED");
    } finally {
      feed.close();
    }
  });
});
