import type { AccountsDb } from "../store/accounts.port.js";

export const ALERT_KINDS = ["quota_80", "quota_100", "rate_limited"] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export interface AlertRow {
  id: number;
  projectId: number;
  kind: AlertKind;
  /** The API key's id for `rate_limited`, "" for the quota kinds. */
  subject: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  createdAt: number;
  details: Record<string, unknown>;
  recipients: number;
}

/**
 * The `usage_alerts` table (migration 0015). `claim` is the cross-process decision: the unique
 * index on (project, kind, subject, day) lets exactly one insert of a day add the row.
 *
 * @example
 * const id = await repo.claim({ projectId: 7, kind: "quota_80", subject: "", day: "2026-11-21", createdAt: now, details: {} });
 * if (id !== null) {
 *   // this process sends the mails, then records how many went out
 *   await repo.setRecipients(id, 2);
 * }
 */
export class UsageAlertsRepo {
  constructor(private readonly db: AccountsDb) {}

  /** Inserts the alert unless the day already has it: the new row's id, or null when it existed. */
  async claim(a: Omit<AlertRow, "id" | "recipients">): Promise<number | null> {
    const row = await this.db
      .insertInto("usage_alerts")
      .values({
        project_id: a.projectId,
        kind: a.kind,
        subject: a.subject,
        day: a.day,
        created_at: a.createdAt,
        details: JSON.stringify(a.details),
        recipients: 0,
      })
      .onConflict((oc) => oc.columns(["project_id", "kind", "subject", "day"]).doNothing())
      .returning("id")
      .executeTakeFirst();
    return row === undefined ? null : Number(row.id);
  }

  async setRecipients(id: number, n: number): Promise<void> {
    await this.db.updateTable("usage_alerts").set({ recipients: n }).where("id", "=", id).execute();
  }

  /** The project's newest alerts first. */
  async listRecent(projectId: number, limit: number): Promise<AlertRow[]> {
    const rows = await this.db
      .selectFrom("usage_alerts")
      .selectAll()
      .where("project_id", "=", projectId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      projectId: Number(r.project_id),
      kind: r.kind as AlertKind,
      subject: r.subject,
      day: r.day,
      createdAt: Number(r.created_at),
      details: JSON.parse(r.details) as Record<string, unknown>,
      recipients: Number(r.recipients),
    }));
  }
}
