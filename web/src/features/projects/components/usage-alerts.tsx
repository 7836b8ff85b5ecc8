import { useQuery } from "@tanstack/react-query";
import { get } from "../../../api";
import { Card, formatDateTime, Notice, nf } from "../../../ui";
import { useProject } from "../../../project-context";

/** One alert of GET /projects/:id/alerts (docs/console-api.md, "Usage alerts"). */
interface UsageAlert {
  id: number;
  kind: "quota_80" | "quota_100" | "rate_limited";
  day: string;
  raisedAt: string;
  recipients: number;
  details: Record<string, unknown>;
}

function describe(a: UsageAlert): string {
  const d = a.details;
  if (a.kind === "rate_limited")
    return `API key "${String(d.keyName)}" (${String(d.keyPrefix)}…) was refused for its rate ${nf.format(Number(d.refusals))} times within ${nf.format(Number(d.windowSeconds))} s`;
  const used = `${nf.format(Number(d.used))} of ${nf.format(Number(d.limit))} requests`;
  return a.kind === "quota_100"
    ? `The monthly quota is used up (${used}): keys are refused until it resets`
    : `80 % of the monthly quota is used (${used})`;
}

/**
 * The project's recent usage alerts on the dashboard: a banner for the server's current UTC day, and the list.
 * Only owners and admins receive alerts and may read them; for other roles it renders nothing
 * (and asks nothing: a refused request would be an error in the browser's console).
 */
export function UsageAlerts() {
  const { project, can } = useProject();
  const allowed = can("alerts.read");
  const q = useQuery({
    queryKey: ["alerts", project.id],
    queryFn: () => get<{ today: string; alerts: UsageAlert[] }>(`/projects/${project.id}/alerts?limit=10`),
    enabled: allowed,
    staleTime: 0,
    refetchInterval: 60_000,
  });
  if (!allowed || !q.data || q.data.alerts.length === 0) return null;
  const current = q.data.alerts.filter((a) => a.day === q.data.today);
  return (
    <section className="usage-alerts" aria-label="Usage alerts">
      {current.length > 0 && (
        <Notice tone="warning">
          <strong>Usage alert:</strong> {describe(current[0])}.
          {current.length > 1 ? ` And ${current.length - 1} more today.` : ""}
        </Notice>
      )}
      <Card title="Recent alerts">
        <ul className="alert-list">
          {q.data.alerts.map((a) => (
            <li key={a.id}>
              <time dateTime={a.raisedAt}>{formatDateTime(a.raisedAt)}</time> · {describe(a)}
              <span className="muted small">
                {" "}
                · {a.recipients} e-mail{a.recipients === 1 ? "" : "s"} sent
              </span>
            </li>
          ))}
        </ul>
      </Card>
    </section>
  );
}
