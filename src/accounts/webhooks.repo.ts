import type { AccountsDb } from "../store/accounts.port.js";
import type { Selectable } from "kysely";
import type { WebhooksTable } from "../store/accounts.schema.js";
import type { Webhook } from "@omniname/wire/webhooks";

/** A webhook as the console shows it: defined in packages/wire, which the console imports too. */
export type { Webhook };

export interface WebhookWithSecret extends Webhook {
  secretEnc: string;
  cursor: number;
}

export interface WebhookInput {
  url: string;
  description: string;
  eventTypes: string[];
  filters: Record<string, string[]>;
  enabled: boolean;
}

function toWebhook(r: Selectable<WebhooksTable>): WebhookWithSecret {
  return {
    id: Number(r.id),
    projectId: Number(r.project_id),
    url: r.url,
    description: r.description,
    eventTypes: JSON.parse(r.event_types),
    filters: JSON.parse(r.filters),
    enabled: Number(r.enabled) === 1,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    failingSince: r.failing_since === null ? null : Number(r.failing_since),
    disabledAt: r.disabled_at === null ? null : Number(r.disabled_at),
    disabledReason: r.disabled_reason,
    secretEnc: r.secret_enc,
    cursor: Number(r.cursor),
  };
}

/** Drops the secret and the cursor: what the console API answers. */
export function publicWebhook(w: WebhookWithSecret): Webhook {
  const { secretEnc: _s, cursor: _c, ...rest } = w;
  return rest;
}

/**
 * The `webhooks` table (migration 0017): a project's endpoints. The secret is sealed by the
 * caller (sealed-secret.ts, the webhook's id as AAD), so `create` inserts a placeholder and seals
 * once the id is known, in the same transaction.
 *
 * @example
 * const hook = await repo.create(projectId, input, cursorNow, now, (id) => sealSecret(pepper, "webhook-secret", id, secret));
 * const hooks = await repo.listByProject(projectId);
 */
export class WebhooksRepo {
  constructor(private readonly db: AccountsDb) {}

  async create(
    projectId: number,
    input: WebhookInput,
    cursor: number,
    now: number,
    seal: (id: number) => string,
  ): Promise<WebhookWithSecret> {
    const row = await this.db
      .insertInto("webhooks")
      .values({
        project_id: projectId,
        url: input.url,
        description: input.description,
        event_types: JSON.stringify(input.eventTypes),
        filters: JSON.stringify(input.filters),
        enabled: input.enabled ? 1 : 0,
        secret_enc: "",
        cursor,
        created_at: now,
        updated_at: now,
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const id = Number(row.id);
    await this.setSecret(id, seal(id), now);
    return (await this.find(projectId, id))!;
  }

  async find(projectId: number, id: number): Promise<WebhookWithSecret | null> {
    const r = await this.db
      .selectFrom("webhooks")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
    return r ? toWebhook(r) : null;
  }

  async findById(id: number): Promise<WebhookWithSecret | null> {
    const r = await this.db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toWebhook(r) : null;
  }

  async countByProject(projectId: number): Promise<number> {
    const r = await this.db
      .selectFrom("webhooks")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("project_id", "=", projectId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async listByProject(projectId: number): Promise<WebhookWithSecret[]> {
    const rows = await this.db
      .selectFrom("webhooks")
      .selectAll()
      .where("project_id", "=", projectId)
      .orderBy("id")
      .execute();
    return rows.map(toWebhook);
  }

  /** Every enabled webhook (the fan-out's list). */
  async listEnabled(): Promise<WebhookWithSecret[]> {
    const rows = await this.db
      .selectFrom("webhooks")
      .selectAll()
      .where("enabled", "=", 1)
      .orderBy("id")
      .execute();
    return rows.map(toWebhook);
  }

  /**
   * Applies the change. Turning a disabled webhook back on clears its failure and restarts its
   * cursor at `cursorNow`: what happened while it was off is not delivered.
   */
  async update(w: WebhookWithSecret, input: WebhookInput, cursorNow: number, now: number): Promise<void> {
    const reEnabled = input.enabled && !w.enabled;
    await this.db
      .updateTable("webhooks")
      .set({
        url: input.url,
        description: input.description,
        event_types: JSON.stringify(input.eventTypes),
        filters: JSON.stringify(input.filters),
        enabled: input.enabled ? 1 : 0,
        updated_at: now,
        ...(reEnabled
          ? { cursor: cursorNow, failing_since: null, disabled_at: null, disabled_reason: null }
          : {}),
      })
      .where("id", "=", w.id)
      .execute();
  }

  async setSecret(id: number, secretEnc: string, now: number): Promise<void> {
    await this.db
      .updateTable("webhooks")
      .set({ secret_enc: secretEnc, updated_at: now })
      .where("id", "=", id)
      .execute();
  }

  /** Deletes the webhook, its queue and its log. */
  async delete(id: number): Promise<void> {
    await this.db.deleteFrom("webhook_attempts").where("webhook_id", "=", id).execute();
    await this.db.deleteFrom("webhook_messages").where("webhook_id", "=", id).execute();
    await this.db.deleteFrom("webhooks").where("id", "=", id).execute();
  }

  async deleteByProject(projectId: number): Promise<void> {
    for (const w of await this.listByProject(projectId)) await this.delete(w.id);
  }

  /**
   * Advances the cursor from `from` to `to` only if no other process did meanwhile: false when
   * the row's cursor is no longer `from` (the caller's transaction then rolls back its inserts).
   */
  async advanceCursor(id: number, from: number, to: number): Promise<boolean> {
    const r = await this.db
      .updateTable("webhooks")
      .set({ cursor: to })
      .where("id", "=", id)
      .where("cursor", "=", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** After a delivery: success clears the failure; a failure starts it (if not started). */
  async recordOutcome(id: number, ok: boolean, now: number): Promise<void> {
    const q = this.db.updateTable("webhooks").where("id", "=", id);
    if (ok) await q.set({ failing_since: null }).where("failing_since", "is not", null).execute();
    else await q.set({ failing_since: now }).where("failing_since", "is", null).execute();
  }

  /** Disables a webhook still enabled and failing since at least `since`; true when this call did. */
  async disableIfFailing(id: number, since: number, now: number, reason: string): Promise<boolean> {
    const r = await this.db
      .updateTable("webhooks")
      .set({ enabled: 0, disabled_at: now, disabled_reason: reason, updated_at: now })
      .where("id", "=", id)
      .where("enabled", "=", 1)
      .where("failing_since", "<=", since)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
