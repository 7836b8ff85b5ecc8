import type { AccountsDb } from "../store/accounts.port.js";
import { accountActor, recordAudit } from "./audit-log.js";
import { isRole } from "./permissions.js";
import { ProjectsRepo } from "./projects.repo.js";

/**
 * Registration with an invitation: when it names a project, the new account joins it and the audit
 * log records it (`member.join`, by the new account, from the request's IP) in the same transaction.
 */
export async function joinByInvitation(
  db: AccountsDb,
  invitation: { id: number; projectId: number | null; role: string | null },
  account: { id: number; email: string },
  now: number,
): Promise<void> {
  const { projectId, role } = invitation;
  if (projectId === null || !isRole(role)) return;
  await new ProjectsRepo(db).addMember(projectId, account.id, role, now);
  await recordAudit(
    db,
    {
      projectId,
      kind: "member.join",
      subject: String(account.id),
      after: { email: account.email, role, invitationId: invitation.id },
    },
    now,
    accountActor(account.id, account.email),
  );
}
