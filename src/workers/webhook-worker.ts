import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { Counter, Gauge, type Registry } from "prom-client";
import { Webhook as Signer } from "standardwebhooks";
import { openSecret } from "../accounts/sealed-secret.js";
import type { WebhookAddressPolicy } from "../accounts/webhook-address.js";
import { type MessageInsert, type QueuedMessage, WebhookQueueRepo } from "../accounts/webhook-queue.repo.js";
import { type WebhookWithSecret, WebhooksRepo } from "../accounts/webhooks.repo.js";
import type { AppContext } from "../app-context.js";
import type { ChangeEvent } from "../domain/change-events.js";
import type { MailMessage } from "../mail/mailer.js";
import { webhookDisabledMail } from "../mail/templates.js";
import { compiledRulesOf } from "../scoring/project-rules.js";
import { matchesChange, parseChangeFilter } from "./change-filter.js";
import { eventData } from "./change-event-data.js";
import { PollLoop } from "./poll-loop.js";
import {
  type DeliveryResult,
  DELIVERY_TIMEOUT_MS,
  postWebhook,
  type TransportOptions,
} from "./webhook-transport.js";

export const WEBHOOK_SECRET_PURPOSE = "webhook-secret";
/** A lease outlives the 10 s timeout: a live deliverer always finishes before another may take over. */
export const LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;
const FANOUT_PAGE = 500;
const CLAIM_BATCH = 20;
const BACKOFF_BASE_MS = 2_000;
const BACKOFF_MAX_MS = 3_600_000;
const MAILED_ROLES = new Set(["owner", "admin"]);
/** Delivered and given-up messages, and attempts, are kept as long as the change log's events. */
const PRUNE_EVERY_MS = 10 * 60_000;

/** Delay before attempt `attempt + 1`: 2 s doubling per attempt, at most 1 h, ±20 % jitter. */
export function backoffMs(attempt: number, random = Math.random): number {
  const base = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1), BACKOFF_MAX_MS);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** The body of a delivery, per Standard Webhooks: `type`, `timestamp`, `data` (the feed's event). */
export function webhookBody(e: ChangeEvent): string {
  return JSON.stringify({ type: e.type, timestamp: new Date(e.createdAt).toISOString(), data: eventData(e) });
}

/** The Standard Webhooks headers of one attempt. */
export function signedHeaders(
  secret: string,
  msgId: string,
  at: number,
  body: string,
): Record<string, string> {
  const when = new Date(Math.floor(at / 1000) * 1000);
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(Math.floor(at / 1000)),
    "webhook-signature": new Signer(secret).sign(msgId, when, body),
    "user-agent": "omniname-webhooks",
  };
}

/** A fresh signing secret, in the Standard Webhooks form `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export interface WebhookWorkerOptions {
  ctx: Pick<AppContext, "store" | "config" | "logger" | "pepper">;
  policy: WebhookAddressPolicy;
  listMembers: (projectId: number) => Promise<Array<{ email: string; role: string }>>;
  send: (m: MailMessage) => void;
  registry?: Registry | null;
  /** How often the change log and the queue are looked at. Default 100 ms. */
  pollMs?: number;
  lookup?: TransportOptions["lookup"];
  /**
   * Real time by default, not the context's clock: signatures are checked against the receiver's
   * clock, and leases and retries are counted across processes.
   */
  clock?: () => number;
  /** Timeout of one delivery; DELIVERY_TIMEOUT_MS (10 s) unless a test shortens it. */
  timeoutMs?: number;
}

/**
 * The webhooks' deliverer, run by every API process (docs/operations.md, "Webhooks"): it fans the
 * change log out into each enabled webhook's queue (by cursor, a conditional advance so that one
 * process only enqueues a page), then leases due messages and POSTs them, signed. Several
 * processes share the work through the queue's leases.
 */
export class WebhookWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  readonly deliveries: Counter<"outcome">;
  private readonly loop: PollLoop;
  private prunedAt = 0;
  private readonly hooks: WebhooksRepo;
  private readonly queue: WebhookQueueRepo;

  constructor(private readonly o: WebhookWorkerOptions) {
    this.loop = new PollLoop(() => this.tick(), o.pollMs ?? 100, o.ctx.logger, "webhook worker pass");
    const registers = o.registry ? [o.registry] : [];
    this.hooks = new WebhooksRepo(o.ctx.store.accounts);
    this.queue = new WebhookQueueRepo(o.ctx.store.accounts);
    this.deliveries = new Counter({
      name: "omniname_webhook_deliveries_total",
      help: "Webhook delivery attempts by outcome (delivered, failed, refused, gave_up)",
      labelNames: ["outcome"],
      registers,
    });
    const queue = this.queue;
    new Gauge({
      name: "omniname_webhook_queue_depth",
      help: "Webhook messages waiting for delivery (every process's, read from the store)",
      registers,
      async collect() {
        this.set(await queue.depth().catch(() => 0));
      },
    });
  }

  private now(): number {
    return (this.o.clock ?? Date.now)();
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private get stopped(): boolean {
    return this.loop.stopped;
  }

  /** One pass: fan-out, then deliveries until nothing is due (and, every 10 minutes, a prune). */
  async tick(): Promise<void> {
    const now = this.now();
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = now;
      await this.queue.prune(now - this.o.ctx.config.changesRetentionDays * 86_400_000);
    }
    await this.fanOut();
    for (;;) {
      const batch = await this.queue.claim(this.owner, this.now(), LEASE_MS, CLAIM_BATCH);
      if (batch.length === 0 || this.stopped) return;
      await Promise.all(batch.map((m) => this.deliver(m)));
    }
  }

  private async fanOut(): Promise<void> {
    const { store } = this.o.ctx;
    for (const hook of await this.hooks.listEnabled()) {
      const events = await store.changeLog.findChangeEventsAfter(hook.cursor, FANOUT_PAGE);
      if (events.length === 0) continue;
      const project = await store.projects.findProjectById(hook.projectId);
      if (!project) continue;
      const rules = compiledRulesOf(project.settings);
      const filter = parseChangeFilter(filterQuery(hook));
      const types = new Set(hook.eventTypes);
      const messages: MessageInsert[] = events
        .filter(
          (e) => (types.size === 0 || types.has(e.type)) && matchesChange(e, filter, rules, hook.projectId),
        )
        .map((e) => ({
          webhookId: hook.id,
          eventId: e.id,
          msgId: `evt_${e.id}`,
          eventType: e.type,
          name: e.name,
          payload: webhookBody(e),
          createdAt: this.now(),
        }));
      const last = events[events.length - 1]!.id;
      await store
        .transaction(async (tx) => {
          await new WebhookQueueRepo(tx.accounts).enqueue(messages);
          if (!(await new WebhooksRepo(tx.accounts).advanceCursor(hook.id, hook.cursor, last)))
            throw new CursorMoved();
        })
        .catch((e: unknown) => {
          if (!(e instanceof CursorMoved)) throw e;
        });
    }
  }

  /** Signs and sends one message, as a test or from the queue. */
  async attempt(hook: WebhookWithSecret, msgId: string, body: string): Promise<DeliveryResult> {
    const secret = openSecret(
      this.o.ctx.pepper,
      WEBHOOK_SECRET_PURPOSE,
      hook.id,
      hook.secretEnc,
      "webhook secret",
    );
    const headers = signedHeaders(secret, msgId, this.now(), body);
    return postWebhook(hook.url, headers, body, {
      policy: this.o.policy,
      lookup: this.o.lookup,
      timeoutMs: this.o.timeoutMs,
    });
  }

  private async deliver(m: QueuedMessage): Promise<void> {
    const { config } = this.o.ctx;
    const hook = await this.hooks.findById(m.webhookId);
    if (!hook) return;
    const r = await this.attempt(hook, m.msgId, m.payload);
    const now = this.now();
    const retryMs = config.webhookRetryHours * 3_600_000;
    const attempt = m.attempts + 1;
    const ok = r.outcome === "delivered";
    const gaveUp = !ok && now - m.createdAt >= retryMs;
    const outcome = ok ? "delivered" : gaveUp ? "gave_up" : r.outcome;
    await this.queue.finish(m.id, this.owner, {
      status: ok ? "delivered" : gaveUp ? "failed" : "pending",
      at: now,
      retryAt: now + backoffMs(attempt),
    });
    this.deliveries.inc({ outcome });
    await this.queue.logAttempt({
      webhookId: hook.id,
      messageId: m.id,
      msgId: m.msgId,
      eventType: m.eventType,
      attempt,
      at: now,
      statusCode: r.statusCode,
      outcome,
      latencyMs: r.latencyMs,
      responseStart: r.responseStart,
      error: r.error,
    });
    await this.hooks.recordOutcome(hook.id, ok, now);
    if (!ok) await this.disableIfFailingTooLong(hook, now, retryMs, r.error ?? `HTTP ${r.statusCode}`);
  }

  private async disableIfFailingTooLong(
    hook: WebhookWithSecret,
    now: number,
    retryMs: number,
    lastError: string,
  ): Promise<void> {
    const { config, store, logger } = this.o.ctx;
    const reason = `every delivery failed for ${config.webhookRetryHours} h; last error: ${lastError}`;
    if (!(await this.hooks.disableIfFailing(hook.id, now - retryMs, now, reason))) return;
    const project = await store.projects.findProjectById(hook.projectId);
    const members = (await this.o.listMembers(hook.projectId)).filter((x) => MAILED_ROLES.has(x.role));
    const link = `${config.publicUrl}/console/projects/${hook.projectId}`;
    for (const member of members)
      this.o.send(
        webhookDisabledMail(member.email, {
          project: project?.name ?? String(hook.projectId),
          url: hook.url,
          hours: config.webhookRetryHours,
          lastError,
          link,
        }),
      );
    logger.warn(
      { webhook: hook.id, project: hook.projectId, recipients: members.length },
      "webhook disabled",
    );
  }
}

class CursorMoved extends Error {}

/** A webhook's stored filters as the change feed's query (each list comma-joined). */
export function filterQuery(hook: Pick<WebhookWithSecret, "filters">): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of Object.entries(hook.filters)) q[k] = v.join(",");
  return q;
}
