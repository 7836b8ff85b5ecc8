import { lookup } from "node:dns/promises";
import { isDeepStrictEqual } from "node:util";
import { recordAudit } from "../../accounts/audit-log.js";
import { sealSecret } from "../../accounts/sealed-secret.js";
import {
  checkWebhookUrl,
  type ResolveAll,
  type WebhookAddressPolicy,
} from "../../accounts/webhook-address.js";
import { type AttemptRow, WebhookQueueRepo } from "../../accounts/webhook-queue.repo.js";
import {
  publicWebhook,
  type Webhook,
  type WebhookInput,
  WebhooksRepo,
} from "../../accounts/webhooks.repo.js";
import type { AppContext } from "../../app-context.js";
import { CHANGE_TYPES } from "../../domain/change-events.js";
import { AppError } from "../../domain/errors.js";
import { parseChangeFilter } from "../../workers/change-filter.js";
import type { DeliveryResult } from "../../workers/webhook-transport.js";
import {
  newWebhookSecret,
  WEBHOOK_SECRET_PURPOSE,
  type WebhookWorker,
} from "../../workers/webhook-worker.js";

/** Webhooks a project may have. */
export const MAX_WEBHOOKS_PER_PROJECT = 20;
/** The filters a webhook takes (the change feed's, but `types`: that is `eventTypes`). */
export const WEBHOOK_FILTERS = ["domains", "tlds", "addresses", "networks", "providers"] as const;

export interface WebhookBody {
  url?: string;
  description?: string;
  eventTypes?: string[];
  filters?: Record<string, string[]>;
  enabled?: boolean;
}

/** What the audit log records of a webhook: its settings, never its secret or cursor. */
function auditView(w: WebhookInput & { id: number }) {
  return {
    id: w.id,
    url: w.url,
    description: w.description,
    eventTypes: w.eventTypes,
    filters: w.filters,
    enabled: w.enabled,
  };
}

const resolveWithDns: ResolveAll = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

/**
 * The console's webhook operations (docs/console-api.md, "Webhooks"): inputs checked (the SSRF
 * guard after DNS, the change feed's filter parser), the secret sealed and shown once.
 */
export class WebhookService {
  private readonly hooks: WebhooksRepo;
  private readonly queue: WebhookQueueRepo;

  constructor(
    private readonly d: {
      ctx: Pick<AppContext, "store" | "pepper" | "clock">;
      policy: WebhookAddressPolicy;
      worker: WebhookWorker;
      resolveAll?: ResolveAll;
    },
  ) {
    this.hooks = new WebhooksRepo(d.ctx.store.accounts);
    this.queue = new WebhookQueueRepo(d.ctx.store.accounts);
  }

  async list(projectId: number): Promise<Webhook[]> {
    return (await this.hooks.listByProject(projectId)).map(publicWebhook);
  }

  async create(projectId: number, body: WebhookBody): Promise<{ webhook: Webhook; secret: string }> {
    if (body.url === undefined) throw new AppError("MISSING_PARAMETER", 'The field "url" is required.');
    if ((await this.hooks.countByProject(projectId)) >= MAX_WEBHOOKS_PER_PROJECT)
      throw new AppError("PLAN_LIMIT_REACHED", `A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks.`);
    const input = await this.validate(body, null);
    const secret = newWebhookSecret();
    const { pepper, clock, store } = this.d.ctx;
    const cursor = (await store.changeLog.changeLogBounds()).newest;
    const created = await store.transaction(async (tx) => {
      const row = await new WebhooksRepo(tx.accounts).create(projectId, input, cursor, clock(), (id) =>
        sealSecret(pepper, WEBHOOK_SECRET_PURPOSE, id, secret),
      );
      await recordAudit(
        tx.accounts,
        { projectId, kind: "webhook.create", subject: String(row.id), after: auditView(row) },
        clock(),
      );
      return row;
    });
    return { webhook: publicWebhook(created), secret };
  }

  async update(projectId: number, id: number, body: WebhookBody): Promise<Webhook> {
    const hook = await this.get(projectId, id);
    const input = await this.validate(body, hook);
    const before = auditView(hook);
    const after = auditView({ ...input, id });
    // An edit that changes nothing writes nothing and records nothing.
    if (isDeepStrictEqual(before, after)) return publicWebhook(hook);
    const { store, clock } = this.d.ctx;
    const cursor = (await store.changeLog.changeLogBounds()).newest;
    await store.transaction(async (tx) => {
      await new WebhooksRepo(tx.accounts).update(hook, input, cursor, clock());
      await recordAudit(
        tx.accounts,
        { projectId, kind: "webhook.update", subject: String(id), before, after },
        clock(),
      );
    });
    return publicWebhook((await this.hooks.find(projectId, id))!);
  }

  async remove(projectId: number, id: number): Promise<void> {
    const hook = await this.get(projectId, id);
    await this.d.ctx.store.transaction(async (tx) => {
      await new WebhooksRepo(tx.accounts).delete(id);
      await recordAudit(
        tx.accounts,
        { projectId, kind: "webhook.delete", subject: String(id), before: auditView(hook) },
        this.d.ctx.clock(),
      );
    });
  }

  /** What this server accepts as a webhook URL (the console's hint says it). */
  addressPolicy(): { allowLoopback: boolean } {
    return { allowLoopback: this.d.policy.allowLoopback };
  }

  /** A new secret, shown in this answer only; deliveries from now on are signed with it. */
  async rotateSecret(projectId: number, id: number): Promise<{ secret: string }> {
    await this.get(projectId, id);
    const secret = newWebhookSecret();
    const { store, pepper, clock } = this.d.ctx;
    await store.transaction(async (tx) => {
      await new WebhooksRepo(tx.accounts).setSecret(
        id,
        sealSecret(pepper, WEBHOOK_SECRET_PURPOSE, id, secret),
        clock(),
      );
      // The entry says the secret changed, never what it is.
      await recordAudit(
        tx.accounts,
        { projectId, kind: "webhook.rotate_secret", subject: String(id) },
        clock(),
      );
    });
    return { secret };
  }

  /** Sends a signed `webhook.test` event now (not queued, not retried) and answers what came back. */
  async sendTest(projectId: number, id: number): Promise<DeliveryResult & { msgId: string }> {
    const hook = await this.get(projectId, id);
    const now = this.d.ctx.clock();
    const msgId = `test_${now}_${Math.random().toString(36).slice(2, 10)}`;
    const body = JSON.stringify({
      type: "webhook.test",
      timestamp: new Date(now).toISOString(),
      data: { webhook: hook.id, project: projectId },
    });
    const r = await this.d.worker.attempt(hook, msgId, body);
    await this.queue.logAttempt({
      webhookId: hook.id,
      messageId: 0,
      msgId,
      eventType: "webhook.test",
      attempt: 1,
      at: now,
      statusCode: r.statusCode,
      outcome: r.outcome,
      latencyMs: r.latencyMs,
      responseStart: r.responseStart,
      error: r.error,
    });
    return { ...r, msgId };
  }

  async deliveries(projectId: number, id: number, limit: number): Promise<AttemptRow[]> {
    await this.get(projectId, id);
    return this.queue.listAttempts(id, limit);
  }

  private async get(projectId: number, id: number) {
    const hook = await this.hooks.find(projectId, id);
    if (!hook) throw new AppError("NOT_FOUND", "No such webhook in this project.");
    return hook;
  }

  /** The body merged over the webhook's current values (a PATCH), checked whole. */
  private async validate(body: WebhookBody, current: WebhookInput | null): Promise<WebhookInput> {
    const url = body.url ?? current?.url ?? "";
    if (body.url !== undefined) {
      const verdict = await checkWebhookUrl(url, this.d.policy, this.d.resolveAll ?? resolveWithDns);
      if (!verdict.ok)
        throw new AppError("INVALID_PARAMETER", `The field "url" is refused: ${verdict.reason}.`);
    }
    const eventTypes = body.eventTypes ?? current?.eventTypes ?? [];
    for (const t of eventTypes)
      if (!(CHANGE_TYPES as readonly string[]).includes(t))
        throw new AppError(
          "INVALID_PARAMETER",
          `The field "eventTypes" lists an unknown type; the types are ${CHANGE_TYPES.join(", ")}.`,
        );
    let filters = current?.filters ?? {};
    if (body.filters !== undefined) {
      const query: Record<string, string> = {};
      for (const [k, values] of Object.entries(body.filters)) {
        if (!(WEBHOOK_FILTERS as readonly string[]).includes(k))
          throw new AppError(
            "INVALID_PARAMETER",
            `The filter "${k.slice(0, 32)}" is unknown; the filters are ${WEBHOOK_FILTERS.join(", ")}.`,
          );
        if (values.some((v) => v.includes(",")))
          throw new AppError("INVALID_PARAMETER", `The filter "${k}" has a value with a comma.`);
        query[k] = values.join(",");
      }
      const parsed = parseChangeFilter(query);
      filters = {};
      for (const k of WEBHOOK_FILTERS) {
        const set = parsed[k];
        if (set) filters[k] = [...set];
      }
    }
    return {
      url,
      description: body.description ?? current?.description ?? "",
      eventTypes: [...new Set(eventTypes)],
      filters,
      enabled: body.enabled ?? current?.enabled ?? true,
    };
  }
}
