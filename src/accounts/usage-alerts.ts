import type { Logger } from "pino";
import type { Config } from "../config/config.schema.js";
import type { MailMessage } from "../mail/mailer.js";
import { quotaAlertMail, rateAlertMail } from "../mail/templates.js";
import type { ApiKey, Project } from "../store/accounts.port.js";

type AlertKey = Pick<ApiKey, "id" | "name" | "prefix">;
type AlertProject = Pick<Project, "id" | "name">;
import { type LimitDecision, monthOf } from "./api-limits.js";
import { consume, type Limiter, type LimiterBackend } from "./limiter-backend.js";
import type { ProjectsRepo } from "./projects.repo.js";
import { type AlertKind, type AlertRow, UsageAlertsRepo } from "./usage-alerts.repo.js";
import { dayOf } from "./usage.js";

interface UsageAlertsDeps {
  repo: UsageAlertsRepo;
  projects: Pick<ProjectsRepo, "listMembers">;
  backend: LimiterBackend;
  config: Pick<Config, "usageAlerts" | "alertRateRefusals" | "alertRateWindowS" | "publicUrl">;
  clock: () => number;
  logger: Logger;
  /** Sends without waiting (AccountService.notify): a failure is logged there. */
  send: (message: MailMessage) => void;
}

/** Who is mailed: the people who can act on a quota (change the plan, the keys, the team). */
const MAILED_ROLES = new Set(["owner", "admin"]);

/**
 * Quota and rate-limit alerts. `observe` runs on every limited v1 request with the decision the
 * limits already made: it compares the counts it is handed against the thresholds and does
 * nothing more unless one is crossed. Only then, and once per process per alert and UTC day, does
 * it touch the store: an insert into `usage_alerts` whose unique index picks the one process (of
 * any number) that mails the project's owners and admins.
 *
 * - `quota_80`: the month's quota is at least 80 % used; `quota_100`: used up (the request that
 *   took the last unit, or one refused with QUOTA_EXCEEDED). At 100 % only `quota_100` is raised.
 * - `rate_limited`, per key: the key was refused with RATE_LIMITED `alertRateRefusals` times within
 *   `alertRateWindowS` seconds ("keeps hitting"), counted on the limits' backend (Redis when set,
 *   so refusals on every process add up). Refusals are counted only until the day's alert is decided.
 *
 * A day is a UTC day of the app's clock: an alert still true the next day is mailed again.
 */
export class UsageAlerts {
  /** Alerts this process already decided (sent, or found sent): key → UTC day. */
  private readonly decided = new Map<string, string>();
  private readonly pending = new Set<Promise<void>>();
  private refusals: Limiter | null = null;
  /** Store inserts attempted (the tests check that a crossed threshold costs one per day). */
  claims = 0;

  constructor(private readonly d: UsageAlertsDeps) {}

  /** Hot path: a few comparisons; the store only when a threshold is crossed for the first time today. */
  observe(key: AlertKey, project: AlertProject, decision: LimitDecision): void {
    if (!this.d.config.usageAlerts) return;
    const q = decision.state.quota;
    if (q.limit > 0 && q.used * 5 >= q.limit * 4)
      this.raise(project, q.used >= q.limit ? "quota_100" : "quota_80", "", {
        used: q.used,
        limit: q.limit,
      });
    if (!decision.allowed && decision.code === "RATE_LIMITED") this.rateRefused(key, project);
  }

  private isDecided(id: string, day: string): boolean {
    return this.decided.get(id) === day;
  }

  private rateRefused(key: AlertKey, project: AlertProject): void {
    const day = dayOf(this.d.clock());
    if (this.isDecided(`${project.id}|rate_limited|${key.id}`, day)) return;
    const windowS = this.d.config.alertRateWindowS;
    const threshold = this.d.config.alertRateRefusals;
    this.refusals ??= this.d.backend.create({
      name: `alert-refusals:${threshold}:${windowS}`,
      points: threshold,
      durationS: windowS,
    });
    this.track(
      consume(this.refusals, String(key.id)).then(({ res }) => {
        if (res.consumedPoints < threshold) return;
        this.raise(project, "rate_limited", String(key.id), {
          keyId: key.id,
          keyName: key.name,
          keyPrefix: key.prefix,
          refusals: res.consumedPoints,
          windowSeconds: windowS,
        });
      }),
    );
  }

  private raise(
    project: AlertProject,
    kind: AlertKind,
    subject: string,
    details: Record<string, unknown>,
  ): void {
    const now = this.d.clock();
    const day = dayOf(now);
    const id = `${project.id}|${kind}|${subject}`;
    if (this.isDecided(id, day)) return;
    if (this.decided.size > 100_000) this.decided.clear();
    this.decided.set(id, day);
    this.track(
      this.claimAndMail(project, {
        projectId: project.id,
        kind,
        subject,
        day,
        createdAt: now,
        details,
      }).catch((e: unknown) => {
        // Not decided after all: a later request tries again (the store may be back).
        if (this.decided.get(id) === day) this.decided.delete(id);
        throw e;
      }),
    );
  }

  private async claimAndMail(project: AlertProject, a: Omit<AlertRow, "id" | "recipients">): Promise<void> {
    this.claims++;
    const id = await this.d.repo.claim(a);
    if (id === null) return; // another process (or an earlier run of this one) has it
    const to = (await this.d.projects.listMembers(project.id)).filter((m) => MAILED_ROLES.has(m.role));
    const link = `${this.d.config.publicUrl}/console/projects/${project.id}`;
    for (const m of to) this.d.send(this.mail(m.email, project, a, link));
    await this.d.repo.setRecipients(id, to.length);
    this.d.logger.info(
      { alert: { projectId: project.id, kind: a.kind, day: a.day, recipients: to.length } },
      "usage alert raised",
    );
  }

  private mail(
    to: string,
    project: AlertProject,
    a: Omit<AlertRow, "id" | "recipients">,
    link: string,
  ): MailMessage {
    const x = a.details;
    if (a.kind === "rate_limited")
      return rateAlertMail(to, {
        project: project.name,
        keyName: String(x.keyName),
        keyPrefix: String(x.keyPrefix),
        refusals: Number(x.refusals),
        windowS: Number(x.windowSeconds),
        link,
      });
    return quotaAlertMail(to, {
      project: project.name,
      percent: a.kind === "quota_100" ? 100 : 80,
      used: Number(x.used),
      limit: Number(x.limit),
      resetsAt: new Date(monthOf(a.createdAt).endMs).toISOString().slice(0, 10),
      link,
    });
  }

  private track(p: Promise<void>): void {
    const q = p
      .catch((e: unknown) => this.d.logger.warn({ err: e }, "usage alert failed; retried by a later request"))
      .finally(() => this.pending.delete(q));
    this.pending.add(q);
  }

  /** The project's most recent alerts, newest first, as the console shows them. */
  async list(projectId: number, limit: number) {
    const rows = await this.d.repo.listRecent(projectId, limit);
    return {
      today: dayOf(this.d.clock()),
      alerts: rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        day: r.day,
        raisedAt: new Date(r.createdAt).toISOString(),
        recipients: r.recipients,
        details: r.details,
      })),
    };
  }

  /** Waits for the alerts in flight (their store writes; the mails are the mailer's to drain). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}

export function createUsageAlerts(
  d: Omit<UsageAlertsDeps, "repo"> & { db: ConstructorParameters<typeof UsageAlertsRepo>[0] },
): UsageAlerts {
  return new UsageAlerts({ ...d, repo: new UsageAlertsRepo(d.db) });
}
