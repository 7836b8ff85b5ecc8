import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import pino, { type Logger } from "pino";
import { createApiKey } from "../../../src/accounts/api-keys.js";
import { type ConsoleServices, createConsoleServices } from "../../../src/accounts/console-services.js";
import { type BuildAppOptions, buildApp } from "../../../src/api/app.js";
import type { AppContext } from "../../../src/app-context.js";
import type { Config } from "../../../src/config/config.schema.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { createScoringRanker, type Ranker } from "../../../src/resolution/rank.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { createTestDatabase } from "../../helpers/pg.js";
import { NOW, seedWorld, WORLD, type WorldDomain } from "./world.js";

export type Backend = "sqlite" | "postgres";

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  store: Store;
  /** The console feature's services behind the v1 allowlists, limits and usage. */
  services: ConsoleServices;
  /** A live key of the test project. */
  key: string;
  projectId: number;
  ids: Map<string, number>;
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * An app over a real store (SQLite in a temp dir, or a private PostgreSQL database) holding the
 * local world, with one project and key. The clock is fixed at NOW so expiry is deterministic.
 */
export async function createTestApp(
  opts: {
    backend?: Backend;
    world?: readonly WorldDomain[];
    /** Writes the test data instead of the local world (e.g. the fixture world). */
    seed?: (store: Store) => Promise<void>;
    /** The app's clock (default NOW of the local world). */
    now?: number;
    /** buildApp's options; the console routes are left out unless `console: true`. */
    app?: Omit<BuildAppOptions, "services">;
    /** The ranking (default: the one production runs, `createScoringRanker()`). */
    ranker?: Ranker;
    logger?: Logger;
    /** Environment the config is loaded from (PLANS, REDIS_URL, …); default none. */
    env?: Record<string, string>;
    /** The test project's plan (default "internal", which these tests rarely reach). */
    plan?: string;
    /** Settings over the defaults (loadConfig's overrides). */
    config?: Partial<Config>;
    /** Runs on the built app before ready(): add test-only routes here. */
    beforeReady?: (app: FastifyInstance, store: Store) => void;
  } = {},
): Promise<TestApp> {
  const backend = opts.backend ?? "sqlite";
  let cleanup: () => Promise<void>;
  let store: Store;
  if (backend === "postgres") {
    const db = await createTestDatabase();
    store = await createStore({ databaseUrl: db.url, dataDir: "." });
    cleanup = db.drop;
  } else {
    const dir = mkdtempSync(join(tmpdir(), "omniname-api-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  let ids = new Map<string, number>();
  if (opts.seed) await opts.seed(store);
  else ids = await seedWorld(store, opts.world ?? WORLD);
  const ctx: AppContext = {
    config: loadConfig(opts.env ?? {}, { dataDir: ".", ...opts.config }),
    logger: opts.logger ?? pino({ level: "silent" }),
    store,
    ranker: opts.ranker ?? createScoringRanker(),
    pepper: randomBytes(16).toString("hex"),
    clock: () => opts.now ?? NOW,
  };
  // The internal plan: the v1 limits always run, and these tests are about answers, not limits.
  const project = await store.projects.createProject({ name: "test", plan: opts.plan ?? "internal" });
  const { key } = await createApiKey(store, ctx.pepper, project.id, "test key");
  const services = createConsoleServices(ctx);
  const app = await buildApp(ctx, { console: false, ...opts.app, services, closeServices: true });
  opts.beforeReady?.(app, store);
  await app.ready();
  return {
    app,
    ctx,
    store,
    services,
    key,
    projectId: project.id,
    ids,
    get: (url, headers = {}) => app.inject({ method: "GET", url, headers: { "api-key": key, ...headers } }),
    async close() {
      await app.close();
      await store.close().catch(() => {});
      await cleanup();
    },
  };
}
