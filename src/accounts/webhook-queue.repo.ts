import { PostgresAdapter, type Selectable, sql } from "kysely";
import type { AccountsDb } from "../store/accounts.port.js";
import type { WebhookMessagesTable } from "../store/accounts.schema.js";
import { safeText } from "../store/kysely/rows.js";
import type { AttemptRow } from "@omniname/wire/webhooks";

export interface QueuedMessage {
  id: number;
  webhookId: number;
  /** The change log id (null for a test event). */
  eventId: number | null;
  /** The Standard Webhooks `webhook-id`: the same on every attempt, so a receiver can deduplicate. */
  msgId: string;
  eventType: string;
  name: string;
  /** The JSON body sent. */
  payload: string;
  createdAt: number;
  attempts: number;
}

export type MessageInsert = Omit<QueuedMessage, "id" | "attempts">;

/** One attempt of the delivery log: defined in packages/wire, which the console imports too. */
export type { AttemptRow };

function toMessage(r: Selectable<WebhookMessagesTable>): QueuedMessage {
  return {
    id: Number(r.id),
    webhookId: Number(r.webhook_id),
    eventId: r.event_id === null ? null : Number(r.event_id),
    msgId: r.msg_id,
    eventType: r.event_type,
    name: r.name,
    payload: r.payload,
    createdAt: Number(r.created_at),
    attempts: Number(r.attempts),
  };
}

/**
 * The durable delivery queue and the delivery log (migration 0017). One deliverer per message
 * across processes: `claim` leases messages, with `for update skip locked` on PostgreSQL and a
 * conditional update on SQLite (one writer; the update takes the row only if its lease is free).
 * A message of a disabled webhook waits. A message is due only when no earlier message of the same webhook and name is still pending,
 * so a name's events arrive in order even across retries. A lease that runs out (its process
 * died) frees the message for another: delivery is at least once.
 *
 * @example
 * await queue.enqueue([{ webhookId, eventId: 42, msgId: "msg_42", eventType, name, payload, createdAt: now }]);
 * for (const m of await queue.claim("pid-1", now, 15_000, 10)) await queue.finish(m.id, "pid-1", { delivered: true, at: now });
 */
export class WebhookQueueRepo {
  constructor(private readonly db: AccountsDb) {}

  private get postgres(): boolean {
    return this.db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async enqueue(messages: MessageInsert[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 200)
      await this.db
        .insertInto("webhook_messages")
        .values(
          messages.slice(i, i + 200).map((m) => ({
            webhook_id: m.webhookId,
            event_id: m.eventId,
            msg_id: m.msgId,
            event_type: m.eventType,
            name: m.name,
            payload: m.payload,
            created_at: m.createdAt,
            status: "pending",
            attempts: 0,
            next_attempt_at: m.createdAt,
            lease_owner: null,
            lease_until: null,
            delivered_at: null,
          })),
        )
        .onConflict((oc) => oc.columns(["webhook_id", "msg_id"]).doNothing())
        .execute();
  }

  /** Leases up to `limit` due messages to `owner` until `now + leaseMs`. */
  async claim(owner: string, now: number, leaseMs: number, limit: number): Promise<QueuedMessage[]> {
    const until = now + leaseMs;
    const due = sql`m.status = 'pending' and m.next_attempt_at <= ${now}
      and (m.lease_until is null or m.lease_until < ${now})
      and exists (select 1 from webhooks w where w.id = m.webhook_id and w.enabled = 1)
      and not exists (select 1 from webhook_messages p where p.webhook_id = m.webhook_id
        and p.name = m.name and p.status = 'pending' and p.id < m.id)`;
    if (this.postgres) {
      const r = await sql<Selectable<WebhookMessagesTable>>`update webhook_messages
        set lease_owner = ${owner}, lease_until = ${until}
        where id in (select m.id from webhook_messages m where ${due}
          order by m.id limit ${limit} for update of m skip locked)
        returning *`.execute(this.db);
      return r.rows.map(toMessage).sort((a, b) => a.id - b.id);
    }
    const candidates = await sql<{ id: number }>`select m.id from webhook_messages m where ${due}
      order by m.id limit ${limit}`.execute(this.db);
    const out: QueuedMessage[] = [];
    for (const { id } of candidates.rows) {
      const row = await this.db
        .updateTable("webhook_messages")
        .set({ lease_owner: owner, lease_until: until })
        .where("id", "=", Number(id))
        .where("status", "=", "pending")
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
        .returningAll()
        .executeTakeFirst();
      if (row) out.push(toMessage(row));
    }
    return out;
  }

  /**
   * Ends an attempt of a message this owner holds: delivered, given up, or due again at `retryAt`.
   * False when the lease was lost meanwhile (another process may deliver it too: at least once).
   */
  async finish(
    id: number,
    owner: string,
    result: { status: "delivered" | "failed" | "pending"; at: number; retryAt?: number },
  ): Promise<boolean> {
    const r = await this.db
      .updateTable("webhook_messages")
      .set((eb) => ({
        status: result.status,
        attempts: eb("attempts", "+", 1),
        next_attempt_at: result.retryAt ?? result.at,
        lease_owner: null,
        lease_until: null,
        delivered_at: result.status === "delivered" ? result.at : null,
      }))
      .where("id", "=", id)
      .where("lease_owner", "=", owner)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async logAttempt(a: Omit<AttemptRow, "id">): Promise<void> {
    await this.db
      .insertInto("webhook_attempts")
      .values({
        webhook_id: a.webhookId,
        message_id: a.messageId,
        msg_id: a.msgId,
        event_type: a.eventType,
        attempt: a.attempt,
        at: a.at,
        status_code: a.statusCode,
        outcome: a.outcome,
        latency_ms: a.latencyMs,
        response_start: safeText(a.responseStart),
        error: a.error === null ? null : safeText(a.error),
      })
      .execute();
  }

  /** The webhook's attempts, newest first. */
  async listAttempts(webhookId: number, limit: number): Promise<AttemptRow[]> {
    const rows = await this.db
      .selectFrom("webhook_attempts")
      .selectAll()
      .where("webhook_id", "=", webhookId)
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      webhookId: Number(r.webhook_id),
      messageId: Number(r.message_id),
      msgId: r.msg_id,
      eventType: r.event_type,
      attempt: Number(r.attempt),
      at: Number(r.at),
      statusCode: r.status_code === null ? null : Number(r.status_code),
      outcome: r.outcome,
      latencyMs: Number(r.latency_ms),
      responseStart: r.response_start,
      error: r.error,
    }));
  }

  /** Messages waiting (pending), for /metrics. */
  async depth(): Promise<number> {
    const r = await this.db
      .selectFrom("webhook_messages")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("status", "=", "pending")
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Deletes delivered and abandoned messages, and attempts, older than `before`. */
  async prune(before: number): Promise<void> {
    await this.db
      .deleteFrom("webhook_messages")
      .where("status", "!=", "pending")
      .where("created_at", "<", before)
      .execute();
    await this.db.deleteFrom("webhook_attempts").where("at", "<", before).execute();
  }
}
