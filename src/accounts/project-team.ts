import type { Config } from "../config/config.schema.js";
import { AppError } from "../domain/errors.js";
import { addedMail } from "../mail/templates.js";
import type { Store } from "../store/store.js";
import { AccountsRepo } from "./accounts.repo.js";
import type { AccountService } from "./accounts.service.js";
import { parseEmail } from "./accounts.service.js";
import { type AuditChange, recordAudit } from "./audit-log.js";
import { canManageRole, type Role } from "./permissions.js";
import type { Plan } from "./plans.js";
import { type ProjectRow, ProjectsRepo } from "./projects.repo.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

interface ProjectTeamDeps {
  store: Pick<Store, "accounts" | "transaction">;
  config: Config;
  clock: () => number;
  accounts: AccountService;
  mustFind: (projectId: number) => Promise<ProjectRow>;
  planOf: (p: ProjectRow) => Plan;
}

/**
 * A project's team: members, invitations, roles. Every change is written with its audit entry in
 * one transaction (accounts/audit-log.ts); the rules that depend on the target (who may change
 * whose role, the last owner) are checked here.
 */
export class ProjectTeam {
  readonly repo: ProjectsRepo;

  constructor(private readonly d: ProjectTeamDeps) {
    this.repo = new ProjectsRepo(d.store.accounts);
  }

  /** A write of the team (no cache to drop) with its audit entry, in one transaction. */
  private teamWrite<T>(change: AuditChange, write: (repo: ProjectsRepo) => Promise<T>): Promise<T> {
    return this.d.store.transaction(async (tx) => {
      const r = await write(new ProjectsRepo(tx.accounts));
      await recordAudit(tx.accounts, change, this.d.clock());
      return r;
    });
  }

  private async emailOf(accountId: number): Promise<string | null> {
    return (await this.d.accounts.repo.findAccountById(accountId))?.email ?? null;
  }

  async members(projectId: number) {
    const [members, invitations] = await Promise.all([
      this.repo.listMembers(projectId),
      this.d.accounts.repo.listProjectInvitations(projectId, this.d.clock()),
    ]);
    return {
      members: members.map((m) => ({ ...m, since: iso(m.since) })),
      invitations: invitations.map((i) => ({
        id: i.id,
        email: i.email,
        role: i.role,
        expiresAt: iso(i.expiresAt),
      })),
    };
  }

  /**
   * Adds someone by e-mail: an account joins at once (and is told by mail); an address without an
   * account gets an invitation that makes it a member when it registers.
   */
  async addMember(projectId: number, actor: { id: number; role: Role }, emailInput: string, role: Role) {
    if (!canManageRole(actor.role, role))
      throw new AppError("FORBIDDEN", `An ${actor.role} cannot grant the role ${role}.`);
    const email = parseEmail(emailInput);
    const p = await this.d.mustFind(projectId);
    const now = this.d.clock();
    const taken =
      (await this.repo.countMembers(projectId)) +
      (await this.d.accounts.repo.listProjectInvitations(projectId, now)).length;
    const max = this.d.planOf(p).maxMembers;
    if (taken >= max)
      throw new AppError("PLAN_LIMIT_REACHED", `The plan allows ${max} members and pending invitations.`);
    const account = await this.d.accounts.repo.findAccountByEmail(email);
    if (account !== null) {
      const added = await this.teamWrite(
        { projectId, kind: "member.add", subject: String(account.id), after: { email, role } },
        async (repo) => {
          if (!(await repo.addMember(projectId, account.id, role, now))) throw new AppError("CONFLICT");
          return true;
        },
      ).catch((e: unknown) => {
        if (e instanceof AppError && e.code === "CONFLICT") return false;
        throw e;
      });
      if (!added) throw new AppError("CONFLICT", "This account is already a member.");
      this.d.accounts.notify(
        addedMail(email, p.name, role, `${this.d.config.publicUrl}/console/projects/${p.id}`),
      );
      return {
        status: "member" as const,
        member: { accountId: account.id, email, fullName: account.fullName, role },
      };
    }
    const pending = (await this.d.accounts.repo.listProjectInvitations(projectId, now)).find(
      (i) => i.email === email,
    );
    if (pending) throw new AppError("CONFLICT", "This address already has a pending invitation.");
    const { invitation } = await this.d.accounts.invite(email, {
      projectId,
      projectName: p.name,
      role,
      createdBy: actor.id,
    });
    // The invitation's token is written by AccountService.invite (shared with the CLI's
    // registration invitations): its entry follows in a write of its own.
    await recordAudit(
      this.d.store.accounts,
      { projectId, kind: "member.invite", subject: String(invitation.id), after: { email, role } },
      this.d.clock(),
    );
    return {
      status: "invited" as const,
      invitation: { id: invitation.id, email, role, expiresAt: iso(invitation.expiresAt) },
    };
  }

  private async target(projectId: number, accountId: number): Promise<Role> {
    const role = await this.repo.findRole(projectId, accountId);
    if (role === null) throw new AppError("NOT_FOUND", "No such member.");
    return role;
  }

  private async keepAnOwner(projectId: number, current: Role): Promise<void> {
    if (current === "owner" && (await this.repo.countMembers(projectId, "owner")) <= 1)
      throw new AppError("LAST_OWNER");
  }

  async changeRole(projectId: number, actor: { id: number; role: Role }, accountId: number, role: Role) {
    const current = await this.target(projectId, accountId);
    if (!canManageRole(actor.role, current) || !canManageRole(actor.role, role))
      throw new AppError("FORBIDDEN", `An ${actor.role} cannot change a ${current} into a ${role}.`);
    // The role it has already: nothing to write or record.
    if (role === current) return { accountId, role };
    if (role !== "owner") await this.keepAnOwner(projectId, current);
    const email = await this.emailOf(accountId);
    await this.teamWrite(
      {
        projectId,
        kind: "member.role",
        subject: String(accountId),
        before: { email, role: current },
        after: { email, role },
      },
      (repo) => repo.setMemberRole(projectId, accountId, role),
    );
    return { accountId, role };
  }

  async removeMember(projectId: number, actor: { id: number; role: Role }, accountId: number): Promise<void> {
    const current = await this.target(projectId, accountId);
    if (!canManageRole(actor.role, current))
      throw new AppError("FORBIDDEN", `An ${actor.role} cannot remove a ${current}.`);
    await this.drop(projectId, accountId, current, "member.remove");
  }

  async leave(projectId: number, accountId: number): Promise<void> {
    await this.drop(projectId, accountId, await this.target(projectId, accountId), "member.leave");
  }

  /** Removes a member (never the last owner), with its audit entry. */
  private async drop(
    projectId: number,
    accountId: number,
    current: Role,
    kind: "member.remove" | "member.leave",
  ): Promise<void> {
    await this.keepAnOwner(projectId, current);
    const email = await this.emailOf(accountId);
    await this.teamWrite(
      { projectId, kind, subject: String(accountId), before: { email, role: current } },
      (repo) => repo.removeMember(projectId, accountId),
    );
  }

  async cancelInvitation(projectId: number, invitationId: number): Promise<void> {
    const inv = (await this.d.accounts.repo.listProjectInvitations(projectId, this.d.clock())).find(
      (i) => i.id === invitationId,
    );
    await this.d.store.transaction(async (tx) => {
      if (!(await new AccountsRepo(tx.accounts).deleteProjectInvitation(projectId, invitationId)))
        throw new AppError("NOT_FOUND", "No such pending invitation.");
      await recordAudit(
        tx.accounts,
        {
          projectId,
          kind: "invitation.cancel",
          subject: String(invitationId),
          before: { email: inv?.email, role: inv?.role },
        },
        this.d.clock(),
      );
    });
  }
}
