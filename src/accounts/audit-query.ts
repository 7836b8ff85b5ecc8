import { AppError } from "../domain/errors.js";
import type { AccountsDb } from "../store/accounts.port.js";
import { AUDIT_KINDS, type AuditKind } from "./audit-log-kinds.js";

export interface AuditEntry {
  id: number;
  at: string;
  kind: string;
  actor: { type: string; accountId: number | null; email: string | null };
  ip: string | null;
  subject: string;
  before: unknown;
  after: unknown;
}

export interface AuditFilter {
  kind?: AuditKind;
  memberId?: number;
  from?: number;
  to?: number;
  /** Entries with an id below this one (the previous page's `nextCursor`). */
  cursor?: number;
  limit: number;
}

export const AUDIT_MAX_LIMIT = 200;

const bad = (field: string, what: string) =>
  new AppError("INVALID_PARAMETER", `The parameter "${field}" ${what}.`);

/** A date (YYYY-MM-DD, UTC) or an ISO 8601 instant with its offset; `end` takes a day's end. */
function parseDate(field: string, raw: string, end: boolean): number {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(raw);
  const ms = day || instant ? Date.parse(day ? `${raw}T00:00:00Z` : raw) : Number.NaN;
  if (!Number.isFinite(ms) || (day && new Date(ms).toISOString().slice(0, 10) !== raw))
    throw bad(field, "is a date (YYYY-MM-DD) or an ISO 8601 time with its offset");
  return day && end ? ms + 86_400_000 - 1 : ms;
}

function parseId(field: string, raw: string): number {
  if (!/^[1-9]\d{0,14}$/.test(raw)) throw bad(field, "is a positive integer");
  return Number(raw);
}

/** The query string of the audit routes, checked field by field (400 naming the field). */
export function parseAuditFilter(q: Record<string, string | undefined>): AuditFilter {
  const f: AuditFilter = { limit: 50 };
  if (q.kind !== undefined) {
    if (!(AUDIT_KINDS as readonly string[]).includes(q.kind))
      throw bad("kind", `is one of ${AUDIT_KINDS.join(", ")}`);
    f.kind = q.kind as AuditKind;
  }
  if (q.member !== undefined) f.memberId = parseId("member", q.member);
  if (q.from !== undefined) f.from = parseDate("from", q.from, false);
  if (q.to !== undefined) f.to = parseDate("to", q.to, true);
  if (f.from !== undefined && f.to !== undefined && f.from > f.to) throw bad("from", "is after to");
  if (q.cursor !== undefined) f.cursor = parseId("cursor", q.cursor);
  if (q.limit !== undefined) {
    if (!/^\d{1,3}$/.test(q.limit) || Number(q.limit) < 1 || Number(q.limit) > AUDIT_MAX_LIMIT)
      throw bad("limit", `is an integer from 1 to ${AUDIT_MAX_LIMIT}`);
    f.limit = Number(q.limit);
  }
  return f;
}

const parse = (s: string | null): unknown => (s === null ? null : JSON.parse(s));

/** One page, newest first, and the cursor of the next (null at the end). */
export async function listAudit(
  db: AccountsDb,
  projectId: number,
  f: AuditFilter,
): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
  let q = db.selectFrom("audit_log").selectAll().where("project_id", "=", projectId);
  if (f.kind !== undefined) q = q.where("kind", "=", f.kind);
  if (f.memberId !== undefined) q = q.where("actor_account_id", "=", f.memberId);
  if (f.from !== undefined) q = q.where("at", ">=", f.from);
  if (f.to !== undefined) q = q.where("at", "<=", f.to);
  if (f.cursor !== undefined) q = q.where("id", "<", f.cursor);
  const rows = await q
    .orderBy("id", "desc")
    .limit(f.limit + 1)
    .execute();
  const entries = rows.slice(0, f.limit).map((r) => ({
    id: Number(r.id),
    at: new Date(Number(r.at)).toISOString(),
    kind: r.kind,
    actor: {
      type: r.actor_type,
      accountId: r.actor_account_id === null ? null : Number(r.actor_account_id),
      email: r.actor_email,
    },
    ip: r.ip,
    subject: r.subject,
    before: parse(r.before_value),
    after: parse(r.after_value),
  }));
  const last = entries.at(-1);
  return { entries, nextCursor: rows.length > f.limit && last ? String(last.id) : null };
}

/** Every matching entry, page by page (bounded memory), for the exports. */
export async function* allAudit(
  db: AccountsDb,
  projectId: number,
  f: Omit<AuditFilter, "limit" | "cursor">,
): AsyncGenerator<AuditEntry> {
  let cursor: number | undefined;
  for (;;) {
    const page = await listAudit(db, projectId, { ...f, cursor, limit: 500 });
    yield* page.entries;
    if (page.nextCursor === null) return;
    cursor = Number(page.nextCursor);
  }
}

const CSV_COLUMNS = [
  "id",
  "at",
  "kind",
  "actor",
  "actor_account_id",
  "actor_email",
  "ip",
  "subject",
  "before",
  "after",
];

/** RFC 4180 field; a leading =, +, - or @ is prefixed with ' so a spreadsheet does not run it as a formula. */
function csvField(v: unknown): string {
  let s = v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export async function* auditCsv(entries: AsyncIterable<AuditEntry>): AsyncGenerator<string> {
  yield `${CSV_COLUMNS.join(",")}\r\n`;
  for await (const e of entries)
    yield `${[
      e.id,
      e.at,
      e.kind,
      e.actor.type,
      e.actor.accountId,
      e.actor.email,
      e.ip,
      e.subject,
      e.before,
      e.after,
    ]
      .map(csvField)
      .join(",")}\r\n`;
}

export async function* auditJsonLines(entries: AsyncIterable<AuditEntry>): AsyncGenerator<string> {
  for await (const e of entries) yield `${JSON.stringify(e)}\n`;
}
