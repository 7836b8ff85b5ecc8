import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, get } from "../../../api";
import { useProject } from "../../../project-context";
import type { MembersAnswer } from "../../../types";
import {
  Card,
  DataTable,
  Empty,
  ErrorMessage,
  Field,
  formatDateTime,
  Loading,
  Notice,
  PageHeader,
} from "../../../ui";
import { AUDIT_KINDS, type AuditFilters, exportUrl, NO_FILTERS, useAudit } from "../api/audit.api";
import { AuditValue } from "./audit-value";

/** The project's audit log: who changed what, when, from where; filters and exports. */
export function AuditPage() {
  const { project, can } = useProject();
  const [draft, setDraft] = useState<AuditFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  /** The browser's refusal of the dates (a start after the end), before any request. */
  const [rangeError, setRangeError] = useState<string | null>(null);
  const allowed = can("audit.read");
  const log = useAudit(project.id, filters, allowed);
  const members = useQuery({
    queryKey: ["members", project.id],
    queryFn: () => get<MembersAnswer>(`/projects/${project.id}/members`),
    enabled: allowed,
  });
  if (!allowed)
    return (
      <div>
        <PageHeader title="Audit log" />
        <Notice tone="warning">Only the project's owners and admins see its audit log.</Notice>
      </div>
    );
  const set = (k: keyof AuditFilters) => (e: { target: { value: string } }) =>
    setDraft({ ...draft, [k]: e.target.value });
  const entries = log.data?.pages.flatMap((p) => p.entries) ?? [];
  return (
    <div>
      <PageHeader
        title="Audit log"
        subtitle="Every change made in the console or with the command line: who, when, from where, before and after."
        actions={
          <>
            <a className="btn btn-secondary" href={exportUrl(project.id, filters, "csv")} download>
              Export CSV
            </a>
            <a className="btn btn-secondary" href={exportUrl(project.id, filters, "jsonl")} download>
              Export JSON Lines
            </a>
          </>
        }
      />
      <Card title="Filters">
        <form
          className="form-row"
          onSubmit={(e) => {
            e.preventDefault();
            if (draft.from !== "" && draft.to !== "" && draft.from > draft.to) {
              setRangeError("The end date is before the start date. Choose an end on or after the start.");
              return;
            }
            setRangeError(null);
            setFilters(draft);
          }}
        >
          <Field label="Kind of change">
            {(p) => (
              <select {...p} value={draft.kind} onChange={set("kind")}>
                <option value="">All kinds</option>
                {AUDIT_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Made by">
            {(p) => (
              <select {...p} value={draft.member} onChange={set("member")}>
                <option value="">Anyone</option>
                {(members.data?.members ?? []).map((m) => (
                  <option key={m.accountId} value={String(m.accountId)}>
                    {m.email}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="From (UTC day)">
            {(p) => <input {...p} type="date" value={draft.from} onChange={set("from")} />}
          </Field>
          <Field label="To (UTC day)" error={rangeError}>
            {(p) => (
              <input
                {...p}
                type="date"
                value={draft.to}
                onChange={(e) => {
                  set("to")(e);
                  setRangeError(null);
                }}
              />
            )}
          </Field>
          <button type="submit" className="btn btn-primary">
            Apply filters
          </button>
        </form>
      </Card>
      {log.isPending ? (
        <Loading label="Loading the audit log" />
      ) : log.isError ? (
        // A refused filter (4xx) is fixed in the form, not by asking again: no "Try again" for it.
        <ErrorMessage
          error={log.error}
          retry={
            log.error instanceof ApiError && log.error.status >= 400 && log.error.status < 500
              ? undefined
              : () => log.refetch()
          }
        />
      ) : entries.length === 0 ? (
        <Empty title="No changes recorded">Changes to the project appear here as they are made.</Empty>
      ) : (
        <DataTable
          label="Audit log entries"
          className="audit-table"
          columns={["When", "Change", "By", "IP", "Before", "After"]}
        >
          {entries.map((e) => (
            <tr key={e.id}>
              <td className="when">{formatDateTime(e.at)}</td>
              <td>
                <code>{e.kind}</code>
                {e.subject && <span className="muted"> #{e.subject}</span>}
              </td>
              <td>{e.actor.type === "cli" ? "command line" : e.actor.email}</td>
              <td>{e.ip ?? "—"}</td>
              <td>
                <AuditValue value={e.before} />
              </td>
              <td>
                <AuditValue value={e.after} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {log.hasNextPage && (
        <button
          type="button"
          className="btn btn-secondary"
          disabled={log.isFetchingNextPage}
          onClick={() => log.fetchNextPage()}
        >
          {log.isFetchingNextPage ? "Loading…" : "Load older changes"}
        </button>
      )}
    </div>
  );
}
