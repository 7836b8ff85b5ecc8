// No Node imports: the web console imports this file too.

/** Every kind of change the audit log records (docs/console-api.md lists them). */
export const AUDIT_KINDS = [
  "project.create",
  "project.update",
  "project.delete",
  "project.plan",
  "settings.update",
  "security.update",
  "two_factor.rule",
  "member.add",
  "member.invite",
  "member.join",
  "member.role",
  "member.remove",
  "member.leave",
  "invitation.cancel",
  "key.create",
  "key.update",
  "key.rotate",
  "key.revoke",
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.rotate_secret",
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];
