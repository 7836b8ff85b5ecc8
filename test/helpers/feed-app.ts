import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import type { Registry } from "prom-client";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { sealSecret } from "../../src/accounts/sealed-secret.js";
import { WebhooksRepo } from "../../src/accounts/webhooks.repo.js";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { Network } from "../../src/domain/networks.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import type { Store } from "../../src/store/store.js";
import { type ApiWorkers, createApiWorkers } from "../../src/workers/api-workers.js";
import { newWebhookSecret, WEBHOOK_SECRET_PURPOSE } from "../../src/workers/webhook-worker.js";
import { startReceiver } from "../webhooks/receiver.js";

/** An API app with its workers over a store, for the change feed's tests (SSE and webhooks). */
export interface FeedApp {
  app: FastifyInstance;
  workers: ApiWorkers;
  /** The app's origin (http://127.0.0.1:port). */
  base: string;
  /** A key of a project (plan internal) with a webhook to `receiver` at `hookPath`. */
  key: string;
  /** A key of a second project, with the network `disabled` turned off in its settings. */
  otherKey: string;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  close(): Promise<void>;
}

/**
 * Starts an API app on 127.0.0.1 (heartbeat 200 ms, stall 500 ms) with its workers (the webhook
 * deliverer, the winner deriver), a project whose webhook (every event type, from the log's head)
 * goes to a `standardwebhooks`-verifying receiver at `hookPath`, and a second project without the
 * network `disabled`.
 */
export async function startFeedApp(
  store: Store,
  o: { name: string; hookPath: string; disabled: Network; registry?: Registry },
): Promise<FeedApp> {
  const ctx: AppContext = {
    config: loadConfig({}, { dataDir: ".", changesHeartbeatMs: 200, changesStallMs: 500 }),
    logger: pino({ level: "silent" }),
    store,
    ranker: createScoringRanker(),
    pepper: randomBytes(16).toString("hex"),
    clock: Date.now,
  };
  const project = await store.projects.createProject({ name: o.name, plan: "internal" });
  const key = (await createApiKey(store, ctx.pepper, project.id, "k")).key;
  const other = await store.projects.createProject({ name: `${o.name}-no-${o.disabled}`, plan: "internal" });
  await store.projects.updateProjectSettings(other.id, { networks: { disabled: [o.disabled] } });
  const otherKey = (await createApiKey(store, ctx.pepper, other.id, "k")).key;
  const receiver = await startReceiver(() => ({ status: 200 }));
  const secret = newWebhookSecret();
  receiver.secrets.set(o.hookPath, secret);
  await new WebhooksRepo(store.accounts).create(
    project.id,
    { url: receiver.url(o.hookPath), description: "", eventTypes: [], filters: {}, enabled: true },
    (await store.changeLog.changeLogBounds()).newest,
    Date.now(),
    (id) => sealSecret(ctx.pepper, WEBHOOK_SECRET_PURPOSE, id, secret),
  );
  const services = createConsoleServices(ctx);
  const workers = createApiWorkers(ctx, services, { registry: o.registry });
  const app = await buildApp(ctx, {
    services,
    closeServices: true,
    workers,
    ...(o.registry ? { metricsRegistry: o.registry } : {}),
  });
  const base = await app.listen({ host: "127.0.0.1", port: 0 });
  workers.start();
  return {
    app,
    workers,
    base,
    key,
    otherKey,
    receiver,
    async close() {
      await workers.stop();
      await app.close();
      await receiver.close();
    },
  };
}
