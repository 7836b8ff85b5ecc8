import { isDeepStrictEqual } from "node:util";
import type { Config } from "../config/config.schema.js";
import { AppError } from "../domain/errors.js";
import type { Ranker } from "../scoring/scoring-ranker.js";
import { parseProjectRules } from "../scoring/project-rules.js";
import { writeAndPublish } from "../store/write-and-publish.js";
import type { Store } from "../store/store.js";
import type { AccessRulesCache } from "./access-rules.js";
import type { AccountService } from "./accounts.service.js";
import { parseAccessLists } from "./allowlist.js";
import type { ApiLimits } from "./api-limits.js";
import type { ApiKeyVerifier } from "./api-keys.js";
import { type AuditChange, recordAudit } from "./audit-log.js";
import type { Role } from "./permissions.js";
import { ProjectKeys } from "./project-keys.js";
import { findPlan, type Plan, planOf, planView } from "./plans.js";
import { ProjectTeam } from "./project-team.js";
import { type ProjectRow, ProjectsRepo } from "./projects.repo.js";
import { dryRunSettings } from "./settings-dry-run.js";
import { loadUsage, type UsageRecorder } from "./usage.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function parseProjectName(input: string): string {
  const name = input.trim().normalize("NFC");
  // Control characters would end up in CLI output and logs.
  if (name.length === 0 || name.length > 100 || /\p{Cc}/u.test(name))
    throw new AppError("INVALID_PARAMETER", "A project name has 1 to 100 printable characters.");
  return name;
}

function parseDescription(input: string): string {
  const d = input.trim().normalize("NFC");
  if (d.length > 1000 || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(d))
    throw new AppError("INVALID_PARAMETER", "A description has at most 1,000 printable characters.");
  return d;
}

function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return err?.code === "23505" || /UNIQUE constraint failed/i.test(err?.message ?? "");
}

interface ProjectServiceDeps {
  store: Pick<Store, "accounts" | "projects" | "scoring" | "winnerJobs" | "transaction">;
  config: Config;
  clock: () => number;
  /** Secret of the API keys' HMAC (AppContext.pepper). */
  pepper: string;
  accounts: AccountService;
  limits: ApiLimits;
  usage: UsageRecorder;
  access: AccessRulesCache;
  /** The ranker of API v1 (AppContext.ranker), for the settings dry run. */
  ranker: Ranker;
}

/**
 * Projects, their team, keys, settings, security and usage. Callers (the console routes) have
 * already checked that the acting account holds the permission for the route; the rules that
 * depend on the target (who may change whose role, the last owner) are checked here.
 */
export class ProjectService {
  readonly repo: ProjectsRepo;
  private keyCache: Pick<ApiKeyVerifier, "invalidateKey" | "invalidateProject"> | null = null;

  readonly team: ProjectTeam;
  readonly keys: ProjectKeys;

  constructor(private readonly d: ProjectServiceDeps) {
    this.repo = new ProjectsRepo(d.store.accounts);
    this.team = new ProjectTeam({
      ...d,
      mustFind: (id) => this.mustFind(id),
      planOf: (p) => this.planOf(p),
    });
    this.keys = new ProjectKeys({
      ...d,
      mustFind: (id) => this.mustFind(id),
      planOf: (p) => this.planOf(p),
      keyCache: () => this.keyCache,
    });
  }

  /** The v1 key cache to invalidate on revocation, deletion and settings changes. */
  attachKeyCache(cache: Pick<ApiKeyVerifier, "invalidateKey" | "invalidateProject">): void {
    this.keyCache = cache;
  }

  /** A project's name, settings, allowlists or keys changed (committed): this process drops what it cached. */
  private projectChanged(projectId: number): void {
    this.keyCache?.invalidateProject(projectId);
    this.d.access.invalidate(projectId);
  }

  /**
   * Writes in one transaction that also tells the other processes (`project:<id>` on the change
   * channel, a NOTIFY sent on commit and never for a rolled-back write), then drops this process's
   * caches of the project.
   */
  private async projectWrite<T>(
    projectId: number,
    write: (tx: Store) => Promise<T>,
    audit: Omit<AuditChange, "projectId">,
  ): Promise<T> {
    const r = await writeAndPublish(this.d.store, [`project:${projectId}`], async (tx) => {
      const out = await write(tx);
      await this.audit(tx, { projectId, ...audit });
      return out;
    });
    this.projectChanged(projectId);
    return r;
  }

  /** Appends the audit entry of a change, in the change's transaction (accounts/audit-log.ts). */
  private audit(tx: Store, change: AuditChange): Promise<void> {
    return recordAudit(tx.accounts, change, this.d.clock());
  }

  planOf(p: { plan: string }): Plan {
    return planOf(this.d.config, p.plan);
  }

  private view(p: ProjectRow, role: Role) {
    return {
      id: p.id,
      name: p.name,
      description: p.description,
      createdAt: iso(p.createdAt),
      plan: p.plan,
      role,
    };
  }

  async list(accountId: number) {
    return (await this.repo.listProjectsOf(accountId)).map((p) => this.view(p, p.role));
  }

  /** How many projects an account may own: the most generous of its projects' plans and the default plan. */
  private async maxOwned(accountId: number): Promise<number> {
    const plans = [this.d.config.defaultPlan, ...(await this.repo.ownedProjectPlans(accountId))];
    return Math.max(...plans.map((n) => findPlan(this.d.config, n)?.maxProjects ?? 0));
  }

  /** How many projects the account owns and may own (the limit `create` enforces), for the console to show first. */
  async allowance(accountId: number): Promise<{ owned: number; max: number }> {
    const owned = (await this.repo.ownedProjectPlans(accountId)).length;
    return { owned, max: await this.maxOwned(accountId) };
  }

  async create(accountId: number, input: { name: string; description?: string }) {
    const name = parseProjectName(input.name);
    const description = parseDescription(input.description ?? "");
    const owned = (await this.repo.ownedProjectPlans(accountId)).length;
    if (owned >= (await this.maxOwned(accountId)))
      throw new AppError(
        "PLAN_LIMIT_REACHED",
        `Your plan allows ${owned} projects; delete one or ask for a larger plan.`,
      );
    try {
      const project = await this.d.store.transaction(async (tx) => {
        const p = await tx.projects.createProject({ name, description, plan: this.d.config.defaultPlan });
        await new ProjectsRepo(tx.accounts).addMember(p.id, accountId, "owner", this.d.clock());
        await this.audit(tx, {
          projectId: p.id,
          kind: "project.create",
          after: { name, description, plan: p.plan },
        });
        return p;
      });
      return this.view({ ...project }, "owner");
    } catch (e) {
      if (isUniqueViolation(e))
        throw new AppError("CONFLICT", "A project with this name exists; choose another name.");
      throw e;
    }
  }

  async get(projectId: number, role: Role) {
    const p = await this.mustFind(projectId);
    const plan = this.planOf(p);
    const [members, keys, quotaUsed] = await Promise.all([
      this.repo.countMembers(projectId),
      this.repo.liveKeyIds(projectId, this.d.clock()),
      this.d.limits.quotaUsed(projectId),
    ]);
    return {
      ...this.view(p, role),
      limits: planView(plan),
      counts: { members, keys: keys.length },
      quota: { limit: plan.monthlyQuota, used: Math.min(quotaUsed, plan.monthlyQuota) },
    };
  }

  private async mustFind(projectId: number): Promise<ProjectRow> {
    const p = await this.d.store.projects.findProjectById(projectId);
    if (p === null) throw new AppError("NOT_FOUND", "No such project.");
    return p;
  }

  async update(projectId: number, role: Role, patch: { name?: string; description?: string }) {
    const next: { name?: string; description?: string } = {};
    if (patch.name !== undefined) next.name = parseProjectName(patch.name);
    if (patch.description !== undefined) next.description = parseDescription(patch.description);
    const old = await this.mustFind(projectId);
    const before = { name: old.name, description: old.description };
    // A save that changes nothing writes nothing and records nothing (the log lists changes only).
    if (isDeepStrictEqual({ ...before, ...next }, before)) return this.view(old, role);
    try {
      await this.projectWrite(
        projectId,
        (tx) => new ProjectsRepo(tx.accounts).updateProject(projectId, next),
        { kind: "project.update", before, after: { ...before, ...next } },
      );
    } catch (e) {
      if (isUniqueViolation(e))
        throw new AppError("CONFLICT", "A project with this name exists; choose another name.");
      throw e;
    }
    return this.view(await this.mustFind(projectId), role);
  }

  /** Deletes the project and its keys; the keys stop working on the next request. */
  async delete(projectId: number): Promise<void> {
    const p = await this.mustFind(projectId);
    await this.projectWrite(projectId, (tx) => new ProjectsRepo(tx.accounts).deleteProject(projectId), {
      kind: "project.delete",
      before: { name: p.name, description: p.description, plan: p.plan },
    });
    this.d.usage.forgetProject(projectId);
    await this.d.limits.forgetProject(projectId);
  }

  async getSettings(projectId: number) {
    return (await this.mustFind(projectId)).settings;
  }

  async putSettings(projectId: number, input: unknown) {
    const parsed = parseProjectRules(input);
    if (!parsed.ok) throw new AppError("INVALID_PARAMETER", parsed.error);
    const before = await this.getSettings(projectId);
    const next = parsed.value as Record<string, unknown>;
    // Settings equal to the saved ones: no write, no audit entry, no winner job.
    if (isDeepStrictEqual(next, before)) return parsed.value;
    const now = this.d.clock();
    await this.projectWrite(
      projectId,
      async (tx) => {
        await tx.projects.updateProjectSettings(projectId, next);
        // Its winner.changed events come after, page by page (src/workers/settings-winner-jobs.ts).
        await tx.winnerJobs.appendSettingsWinnerJob({
          projectId,
          settingsBefore: before,
          settingsAfter: next,
          rankAt: now,
          createdAt: now,
        });
      },
      { kind: "settings.update", before, after: parsed.value },
    );
    return parsed.value;
  }

  /** Which names would change winner with these settings; validated like putSettings, nothing saved. */
  async dryRunSettings(projectId: number, input: unknown) {
    const current = await this.getSettings(projectId);
    return dryRunSettings({ store: this.d.store, ranker: this.d.ranker }, current, input, this.d.clock());
  }

  async getSecurity(projectId: number) {
    const p = await this.mustFind(projectId);
    const a = await this.repo.findAccess(projectId);
    return {
      allowedIps: a.allowedIps,
      allowedOrigins: a.allowedOrigins,
      updatedAt: iso(a.updatedAt),
      limits: planView(this.planOf(p)),
    };
  }

  async putSecurity(projectId: number, input: { allowedIps: string[]; allowedOrigins: string[] }) {
    const lists = parseAccessLists(input);
    await this.mustFind(projectId);
    const old = await this.repo.findAccess(projectId);
    // A save that changes nothing writes nothing and records nothing (the log lists changes only).
    if (isDeepStrictEqual(lists, { allowedIps: old.allowedIps, allowedOrigins: old.allowedOrigins }))
      return this.getSecurity(projectId);
    await this.projectWrite(
      projectId,
      (tx) => new ProjectsRepo(tx.accounts).setAccess(projectId, lists, this.d.clock()),
      {
        kind: "security.update",
        before: { allowedIps: old.allowedIps, allowedOrigins: old.allowedOrigins },
        after: lists,
      },
    );
    return this.getSecurity(projectId);
  }

  /** The team: members, invitations, roles (project-team.ts). */
  members(projectId: number) {
    return this.team.members(projectId);
  }

  addMember(...a: Parameters<ProjectTeam["addMember"]>) {
    return this.team.addMember(...a);
  }

  changeRole(...a: Parameters<ProjectTeam["changeRole"]>) {
    return this.team.changeRole(...a);
  }

  removeMember(...a: Parameters<ProjectTeam["removeMember"]>): Promise<void> {
    return this.team.removeMember(...a);
  }

  leave(projectId: number, accountId: number): Promise<void> {
    return this.team.leave(projectId, accountId);
  }

  cancelInvitation(projectId: number, invitationId: number): Promise<void> {
    return this.team.cancelInvitation(projectId, invitationId);
  }

  /** The project's API keys (project-keys.ts). */
  listKeys(projectId: number) {
    return this.keys.list(projectId);
  }

  /** A name alone, or the name with the key's scopes and expiry; the secret is in this answer only. */
  createKey(projectId: number, input: string | Parameters<ProjectKeys["create"]>[1]) {
    return this.keys.create(projectId, typeof input === "string" ? { name: input } : input);
  }

  updateKey(...a: Parameters<ProjectKeys["update"]>) {
    return this.keys.update(...a);
  }

  rotateKey(...a: Parameters<ProjectKeys["rotate"]>) {
    return this.keys.rotate(...a);
  }

  revokeKey(projectId: number, keyId: number): Promise<void> {
    return this.keys.revoke(projectId, keyId);
  }

  /** The last 30 days of usage, the month's quota and the plan, counts flushed first. */
  async dashboard(projectId: number) {
    const p = await this.mustFind(projectId);
    const plan = this.planOf(p);
    await this.d.usage.flush();
    const now = this.d.clock();
    const [usage, used] = await Promise.all([
      loadUsage(this.d.store.accounts, projectId, now, 30),
      this.d.limits.quotaUsed(projectId, now),
    ]);
    const monthEnd = new Date(now);
    const resetsAt = new Date(
      Date.UTC(monthEnd.getUTCFullYear(), monthEnd.getUTCMonth() + 1, 1),
    ).toISOString();
    const u = Math.min(used, plan.monthlyQuota);
    return {
      project: { id: p.id, name: p.name, createdAt: iso(p.createdAt) },
      plan: planView(plan),
      quota: { limit: plan.monthlyQuota, used: u, remaining: plan.monthlyQuota - u, resetsAt },
      ...usage,
    };
  }
}
