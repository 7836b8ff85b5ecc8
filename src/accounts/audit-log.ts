import { AsyncLocalStorage } from "node:async_hooks";
import type { AccountsDb } from "../store/accounts.port.js";

import type { AuditKind } from "./audit-log-kinds.js";

export { AUDIT_KINDS, type AuditKind } from "./audit-log-kinds.js";

/** Who made a change: a signed-in account (console API) or the operator's CLI. */
export type AuditActor =
  | { type: "account"; accountId: number; email: string; ip: string | null }
  | { type: "cli"; ip?: null };

export const CLI_ACTOR: AuditActor = { type: "cli" };

/**
 * The actor of the current console request. The console plugin runs each request inside
 * `auditScope.run({ actor })`, where `actor()` reads the request's session when a change is
 * written; outside a request (the CLI, tests) the CLI actor is used.
 */
export const auditScope = new AsyncLocalStorage<{
  actor: () => AuditActor | null;
  ip: () => string | null;
}>();

export function currentActor(): AuditActor {
  return auditScope.getStore()?.actor() ?? CLI_ACTOR;
}

/** The account that acts without a session yet (registering): itself, from the request's IP. */
export function accountActor(accountId: number, email: string): AuditActor {
  return { type: "account", accountId, email, ip: auditScope.getStore()?.ip() ?? null };
}

/** Field names whose values never reach the log, at any depth: hashes, secrets, passwords, tokens, keys. */
const SECRET_FIELD = /hash|secret|password|token|^key$|totp|recovery|pepper/i;

/** A copy of `value` without secret fields (JSON-safe); undefined stays undefined. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      if (!SECRET_FIELD.test(k) && v !== undefined) out[k] = redact(v);
    return out;
  }
  return value;
}

export interface AuditChange {
  projectId: number;
  kind: AuditKind;
  /** What the change is about inside the project (a member's account id, a key's id), "" for the project. */
  subject?: string;
  before?: unknown;
  after?: unknown;
}

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(redact(v)));

/**
 * Appends one entry. Pass the transaction's accounts db (`tx.accounts`) so the entry commits or
 * rolls back with the change it records.
 */
export async function recordAudit(
  db: AccountsDb,
  change: AuditChange,
  at: number,
  actor: AuditActor = currentActor(),
): Promise<void> {
  await db
    .insertInto("audit_log")
    .values({
      project_id: change.projectId,
      at,
      kind: change.kind,
      actor_type: actor.type,
      actor_account_id: actor.type === "account" ? actor.accountId : null,
      actor_email: actor.type === "account" ? actor.email : null,
      ip: actor.type === "account" ? actor.ip : null,
      subject: change.subject ?? "",
      before_value: json(change.before),
      after_value: json(change.after),
    })
    .execute();
}

/** Deletes the entries older than `before` (epoch ms); the number deleted. */
export async function pruneAudit(db: AccountsDb, before: number): Promise<number> {
  const r = await db.deleteFrom("audit_log").where("at", "<", before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
