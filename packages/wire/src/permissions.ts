/**
 * Roles and the fixed permission set of each (docs/permissions.md). `docs/permissions.md` is the written
 * form of this table and of the routes that need each permission; a test reads that document and
 * checks every route for every role against the running API.
 */
export const ROLES = ["owner", "admin", "developer", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  "project.read": ["owner", "admin", "developer", "viewer"],
  "project.update": ["owner", "admin"],
  "project.delete": ["owner"],
  "usage.read": ["owner", "admin", "developer", "viewer"],
  "alerts.read": ["owner", "admin"],
  "audit.read": ["owner", "admin"],
  "settings.read": ["owner", "admin", "developer", "viewer"],
  "settings.write": ["owner", "admin", "developer"],
  "security.read": ["owner", "admin", "developer", "viewer"],
  "security.write": ["owner", "admin"],
  "members.read": ["owner", "admin", "developer", "viewer"],
  "members.write": ["owner", "admin"],
  "keys.read": ["owner", "admin", "developer", "viewer"],
  "keys.write": ["owner", "admin", "developer"],
  "webhooks.read": ["owner", "admin"],
  "webhooks.write": ["owner", "admin"],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

export function can(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/**
 * Who may grant or take away a role: owners manage everyone; admins manage admins, developers and
 * viewers but can neither touch an owner nor make one.
 */
export function canManageRole(actor: Role, target: Role): boolean {
  if (actor === "owner") return true;
  return actor === "admin" && target !== "owner";
}
