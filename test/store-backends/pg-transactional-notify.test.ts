import pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { type ConsoleServices, createConsoleServices } from "../../src/accounts/console-services.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { writeAndPublish } from "../../src/store/write-and-publish.js";
import { createStore } from "../../src/store/create-store.js";
import { CHANNEL } from "../../src/store/postgres/pg-change-feed.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createTestDatabase } from "../helpers/pg.js";

/**
 * Key and project changes are NOTIFYed inside their writing transaction: another process hears of
 * them exactly when they commit, and never of a write that rolled back. A raw LISTEN connection
 * (another process) records what is delivered, and when.
 */
describe("change notifications are sent in the writing transaction (PostgreSQL)", () => {
  let db: { url: string; drop: () => Promise<void> };
  let store: PostgresStore;
  let services: ConsoleServices;
  let listener: pg.Client;
  let heard: Array<{ topic: string; at: number }> = [];
  let projectId: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = (await createStore({ databaseUrl: db.url, dataDir: "." })) as PostgresStore;
    const ctx: AppContext = {
      config: loadConfig({}, { dataDir: "." }),
      logger: pino({ level: "silent" }),
      store,
      ranker: createScoringRanker(),
      pepper: "p".repeat(32),
      clock: Date.now,
    };
    services = createConsoleServices(ctx);
    projectId = (await store.projects.createProject({ name: "notify", plan: "internal" })).id;
    listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    listener.on("notification", (m) => {
      if (m.channel === CHANNEL && m.payload) heard.push({ topic: m.payload, at: performance.now() });
    });
    await listener.query(`LISTEN ${CHANNEL}`);
  });

  afterAll(async () => {
    await listener?.end();
    await services?.close();
    await store?.close();
    await db?.drop();
  });

  beforeEach(() => {
    heard = [];
  });

  /** Waits until `topic` was heard (or fails after 5 s); returns the delivery time. */
  async function heardOf(topic: string): Promise<number> {
    const until = performance.now() + 5_000;
    for (;;) {
      const h = heard.find((x) => x.topic === topic);
      if (h) return h.at;
      if (performance.now() > until) throw new Error(`${topic} not heard; heard ${JSON.stringify(heard)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  it("delivers nothing for a write that rolls back, and a committed write's topic only after its commit", async () => {
    const { apiKey } = await createApiKey(store, "p".repeat(32), projectId, "rolled back");
    await expect(
      writeAndPublish(store, [`key:${apiKey.id}`], async (tx) => {
        await tx.projects.revokeApiKey(apiKey.id, Date.now());
        throw new Error("the write fails after its NOTIFY was queued");
      }),
    ).rejects.toThrow("the write fails");
    // Published inside the transaction, then held open for 300 ms before committing.
    let committedAt = 0;
    await writeAndPublish(store, ["project:4242"], async (tx) => {
      await tx.projects.updateProjectSettings(projectId, { includeExpired: true });
      await new Promise((r) => setTimeout(r, 300));
      committedAt = performance.now();
    });
    const at = await heardOf("project:4242");
    expect(at).toBeGreaterThanOrEqual(committedAt);
    // The listener is live and ordered: the rolled-back key change never arrived, and its revocation was undone.
    expect(heard.map((h) => h.topic)).toEqual(["project:4242"]);
    expect(
      (await store.projects.listApiKeys(projectId)).find((k) => k.id === apiKey.id)?.revokedAt,
    ).toBeNull();
  });

  it("the console's key revocation, settings, allowlists and project edits notify on commit, once each", async () => {
    const { apiKey } = await createApiKey(store, "p".repeat(32), projectId, "revoked");
    await services.projects.revokeKey(projectId, apiKey.id);
    await heardOf(`key:${apiKey.id}`);
    await services.projects.putSettings(projectId, { includeExpired: false });
    await services.projects.putSecurity(projectId, { allowedIps: ["10.0.0.0/8"], allowedOrigins: [] });
    await services.projects.update(projectId, "owner", { description: "changed" });
    await new Promise((r) => setTimeout(r, 200));
    expect(heard.map((h) => h.topic)).toEqual([
      `key:${apiKey.id}`,
      `project:${projectId}`,
      `project:${projectId}`,
      `project:${projectId}`,
    ]);
  });

  it("a project edit that fails (a taken name) rolls back and notifies nobody", async () => {
    await store.projects.createProject({ name: "taken", plan: "internal" });
    await expect(services.projects.update(projectId, "owner", { name: "taken" })).rejects.toMatchObject({
      code: "CONFLICT",
    });
    await writeAndPublish(store, ["marker"], async () => {});
    await heardOf("marker");
    expect(heard.map((h) => h.topic)).toEqual(["marker"]);
  });
});
