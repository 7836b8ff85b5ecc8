import type { Registry } from "prom-client";
import type { ConsoleServices } from "../accounts/console-services.js";
import type { AppContext } from "../app-context.js";
import { webhookAddressPolicy } from "../accounts/webhook-address.js";
import { SettingsWinnerRunner } from "./settings-winner-jobs.js";
import type { TransportOptions } from "./webhook-transport.js";
import { WebhookWorker } from "./webhook-worker.js";
import { WinnerDeriver } from "./winner-deriver.js";

export interface ApiWorkersOptions {
  /** Run the webhook deliverer (docs/operations.md, "Webhooks"). Default true. */
  deliver?: boolean;
  /** Replaces node:dns behind the deliveries' address check (tests). */
  lookup?: TransportOptions["lookup"];
  /** The passes' interval (ms): deliveries, winner.changed, settings jobs. Default 100. */
  pollMs?: number;
  /** The deliverer's clock (its signatures' timestamps). */
  clock?: () => number;
  timeoutMs?: number;
  /** Where the deliverer's metrics go (GET /metrics): the app's registry. */
  registry?: Registry | null;
}

/**
 * The background work of an API process, beside its HTTP server and apart from it: the webhook
 * deliverer (the durable queue in the store), the winner.changed deriver (which domain now wins a
 * name, for the change feed and the webhooks) and the settings-change runner (winner.changed after
 * a project's rules changed). The composition root (`start`) builds them per role, starts them once
 * the app listens, and stops them before the app closes; the HTTP layer only uses the deliverer for
 * the console's test deliveries.
 *
 * @example
 * const workers = createApiWorkers(ctx, services, { registry });
 * const app = await buildApp(ctx, { services, workers });
 * await app.listen(…); workers.start(); … await workers.stop(); await app.close();
 */
export interface ApiWorkers {
  readonly webhooks: WebhookWorker;
  start(): void;
  stop(): Promise<void>;
}

export function createApiWorkers(
  ctx: AppContext,
  services: Pick<ConsoleServices, "projects" | "accounts">,
  opts: ApiWorkersOptions = {},
): ApiWorkers {
  const webhooks = new WebhookWorker({
    ctx,
    policy: webhookAddressPolicy(ctx.config),
    listMembers: (projectId) => services.projects.repo.listMembers(projectId),
    send: (m) => services.accounts.notify(m),
    registry: opts.registry ?? null,
    lookup: opts.lookup,
    pollMs: opts.pollMs,
    clock: opts.clock,
    timeoutMs: opts.timeoutMs,
  });
  const winners = new WinnerDeriver({
    store: ctx.store,
    ranker: ctx.ranker,
    logger: ctx.logger,
    clock: ctx.clock,
    pollMs: opts.pollMs,
  });
  const settingsWinners = new SettingsWinnerRunner({
    store: ctx.store,
    ranker: ctx.ranker,
    logger: ctx.logger,
    clock: ctx.clock,
    pollMs: opts.pollMs,
    retentionMs: ctx.config.changesRetentionDays * 86_400_000,
  });
  const deliver = opts.deliver ?? true;
  let started = false;
  return {
    webhooks,
    start() {
      if (started) return;
      started = true;
      if (deliver) webhooks.start();
      winners.start();
      settingsWinners.start();
    },
    async stop() {
      if (!started) return;
      started = false;
      await Promise.all([deliver ? webhooks.stop() : null, winners.stop(), settingsWinners.stop()]);
    },
  };
}
