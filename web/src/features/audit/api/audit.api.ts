import { useInfiniteQuery } from "@tanstack/react-query";
import { API_BASE, get } from "../../../api";

/** The kinds of change the audit log records (src/accounts/audit-log.ts). */
export { AUDIT_KINDS } from "@omniname/wire/audit-kinds";

export interface AuditEntry {
  id: number;
  at: string;
  kind: string;
  actor: { type: "account" | "cli"; accountId: number | null; email: string | null };
  ip: string | null;
  subject: string;
  before: unknown;
  after: unknown;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

export interface AuditFilters {
  kind: string;
  member: string;
  from: string;
  to: string;
}

export const NO_FILTERS: AuditFilters = { kind: "", member: "", from: "", to: "" };

function query(f: AuditFilters, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...extra })) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The project's audit log, newest first, a page of 50 at a time (cursor); asked only when `enabled`. */
export function useAudit(projectId: number, filters: AuditFilters, enabled: boolean) {
  return useInfiniteQuery({
    enabled,
    queryKey: ["audit", projectId, filters],
    initialPageParam: "",
    queryFn: ({ pageParam }) =>
      get<AuditPage>(`/projects/${projectId}/audit${query(filters, { cursor: pageParam, limit: "50" })}`),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
}

/** The address of the export of every matching entry (a download: CSV or JSON Lines). */
export function exportUrl(projectId: number, filters: AuditFilters, format: "csv" | "jsonl"): string {
  return `${API_BASE}/projects/${projectId}/audit${query(filters, { format })}`;
}
