import type { AccountsDb, Project } from "../store/accounts.port.js";
import { toProject } from "../store/kysely/rows.js";
import type { Role } from "./permissions.js";
import { WebhooksRepo } from "./webhooks.repo.js";

interface Member {
  accountId: number;
  email: string;
  fullName: string;
  role: Role;
  since: number;
}

interface ProjectAccess {
  allowedIps: string[];
  allowedOrigins: string[];
  updatedAt: number | null;
}

/** A project as the store holds it (the same shape as the store port's Project). */
export type ProjectRow = Project;

function parseList(json: string): string[] {
  const v = JSON.parse(json) as unknown;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/**
 * Membership, project administration and access rules over the accounts tables. Project lookups
 * by id or name are the store's (`findProjectById`, `findProjectByName`).
 */
export class ProjectsRepo {
  constructor(readonly db: AccountsDb) {}

  async listProjectsOf(accountId: number): Promise<Array<ProjectRow & { role: Role }>> {
    const rows = await this.db
      .selectFrom("memberships")
      .innerJoin("projects", "projects.id", "memberships.project_id")
      .select([
        "projects.id",
        "projects.name",
        "projects.description",
        "projects.plan",
        "projects.created_at",
        "projects.settings",
        "memberships.role",
      ])
      .where("memberships.account_id", "=", accountId)
      .orderBy("projects.id")
      .execute();
    return rows.map((r) => ({ ...toProject(r), role: r.role as Role }));
  }

  async findRole(projectId: number, accountId: number): Promise<Role | null> {
    const r = await this.db
      .selectFrom("memberships")
      .select("role")
      .where("project_id", "=", projectId)
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    return r ? (r.role as Role) : null;
  }

  async listMembers(projectId: number): Promise<Member[]> {
    const rows = await this.db
      .selectFrom("memberships")
      .innerJoin("accounts", "accounts.id", "memberships.account_id")
      .select([
        "accounts.id",
        "accounts.email",
        "accounts.full_name",
        "memberships.role",
        "memberships.created_at",
      ])
      .where("memberships.project_id", "=", projectId)
      .orderBy("memberships.created_at")
      .orderBy("accounts.id")
      .execute();
    return rows.map((r) => ({
      accountId: Number(r.id),
      email: r.email,
      fullName: r.full_name,
      role: r.role as Role,
      since: Number(r.created_at),
    }));
  }

  async countMembers(projectId: number, role?: Role): Promise<number> {
    let q = this.db
      .selectFrom("memberships")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("project_id", "=", projectId);
    if (role) q = q.where("role", "=", role);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  /** Adds a member; false when the account already is one. */
  async addMember(projectId: number, accountId: number, role: Role, now: number): Promise<boolean> {
    const res = await this.db
      .insertInto("memberships")
      .values({ project_id: projectId, account_id: accountId, role, created_at: now })
      .onConflict((oc) => oc.columns(["project_id", "account_id"]).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async setMemberRole(projectId: number, accountId: number, role: Role): Promise<void> {
    await this.db
      .updateTable("memberships")
      .set({ role })
      .where("project_id", "=", projectId)
      .where("account_id", "=", accountId)
      .execute();
  }

  async removeMember(projectId: number, accountId: number): Promise<void> {
    await this.db
      .deleteFrom("memberships")
      .where("project_id", "=", projectId)
      .where("account_id", "=", accountId)
      .execute();
  }

  /** Plans of the projects an account owns (the project-count limit follows the best of them). */
  async ownedProjectPlans(accountId: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom("memberships")
      .innerJoin("projects", "projects.id", "memberships.project_id")
      .select("projects.plan")
      .where("memberships.account_id", "=", accountId)
      .where("memberships.role", "=", "owner")
      .execute();
    return rows.map((r) => r.plan);
  }

  async updateProject(id: number, patch: { name?: string; description?: string }): Promise<void> {
    if (patch.name === undefined && patch.description === undefined) return;
    await this.db.updateTable("projects").set(patch).where("id", "=", id).execute();
  }

  async setPlan(id: number, plan: string): Promise<void> {
    await this.db.updateTable("projects").set({ plan }).where("id", "=", id).execute();
  }

  /** Ids of a project's live keys (to drop them from the API's key cache). */
  /** Keys that count against the plan: not revoked, not expired, not in a rotation's overlap. */
  async liveKeyIds(projectId: number, now: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .select("id")
      .where("project_id", "=", projectId)
      .where("revoked_at", "is", null)
      .where("rotated_to", "is", null)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
      .execute();
    return rows.map((r) => Number(r.id));
  }

  /** Deletes a project with its keys, members, invitations, access rules and usage. */
  async deleteProject(id: number): Promise<void> {
    // Explicit deletes rather than relying on ON DELETE CASCADE alone: SQLite enforces foreign
    // keys only on connections that enabled them.
    await this.db.deleteFrom("api_keys").where("project_id", "=", id).execute();
    await this.db.deleteFrom("memberships").where("project_id", "=", id).execute();
    await this.db.deleteFrom("account_tokens").where("project_id", "=", id).execute();
    await this.db.deleteFrom("project_access").where("project_id", "=", id).execute();
    await this.db.deleteFrom("usage_counters").where("project_id", "=", id).execute();
    await this.db.deleteFrom("api_key_usage").where("project_id", "=", id).execute();
    await this.db.deleteFrom("usage_alerts").where("project_id", "=", id).execute();
    await new WebhooksRepo(this.db).deleteByProject(id);
    await this.db.deleteFrom("projects").where("id", "=", id).execute();
  }

  async findAccess(projectId: number): Promise<ProjectAccess> {
    const r = await this.db
      .selectFrom("project_access")
      .selectAll()
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    if (!r) return { allowedIps: [], allowedOrigins: [], updatedAt: null };
    return {
      allowedIps: parseList(r.allowed_ips),
      allowedOrigins: parseList(r.allowed_origins),
      updatedAt: Number(r.updated_at),
    };
  }

  async setAccess(
    projectId: number,
    access: { allowedIps: string[]; allowedOrigins: string[] },
    now: number,
  ): Promise<void> {
    const values = {
      project_id: projectId,
      allowed_ips: JSON.stringify(access.allowedIps),
      allowed_origins: JSON.stringify(access.allowedOrigins),
      updated_at: now,
    };
    const { project_id, ...update } = values;
    await this.db
      .insertInto("project_access")
      .values(values)
      .onConflict((oc) => oc.column("project_id").doUpdateSet(update))
      .execute();
  }
}
