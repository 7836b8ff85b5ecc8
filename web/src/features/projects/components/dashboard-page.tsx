import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { get } from "../../../api";
import type { Dashboard } from "../../../types";
import { Card, DataTable, Empty, ErrorMessage, formatDate, Loading, nf, num, PageHeader } from "../../../ui";
import { useProject } from "../../../project-context";
import { ProjectAbout } from "./project-about";
import { UsageAlerts } from "./usage-alerts";

const COLORS = { requests: "#4f46e5", errors: "#dc2626", p50: "#0891b2", p95: "#7c3aed", p99: "#db2777" };
const shortDay = (d: string) =>
  new Date(`${d}T00:00:00Z`).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {sub && <div className="stat-sub">{sub}</div>}
    </div>
  );
}

function QuotaCard({ d }: { d: Dashboard }) {
  const pct = d.quota.limit > 0 ? Math.min(100, (d.quota.used / d.quota.limit) * 100) : 0;
  return (
    <Card title="Monthly quota">
      <div className="quota">
        <div className="quota-numbers">
          <strong>{nf.format(d.quota.used)}</strong> of {nf.format(d.quota.limit)} names used (
          {pct < 0.1 && pct > 0 ? "<0.1" : pct.toFixed(1)}%)
        </div>
        <progress
          className={`quota-bar ${pct >= 90 ? "is-high" : ""}`}
          max={d.quota.limit}
          value={d.quota.used}
          aria-label="Monthly quota used"
        />
        <div className="muted small">
          {nf.format(d.quota.remaining)} left · resets {formatDate(d.quota.resetsAt)}. The quota counts this
          calendar month's names (UTC); requests refused by a limit do not count.
        </div>
      </div>
    </Card>
  );
}

function PlanCard({ d }: { d: Dashboard }) {
  const p = d.plan;
  return (
    <Card title={`Plan: ${p.name}`}>
      <dl className="deflist">
        <dt>Rate per key</dt>
        <dd>
          {nf.format(p.requestsPerSecond)} requests/s
          {p.rateWindowSeconds > 1 ? ` (over ${p.rateWindowSeconds} s)` : ""}
        </dd>
        <dt>Monthly quota</dt>
        <dd>{nf.format(p.monthlyQuota)}</dd>
        <dt>API keys</dt>
        <dd>up to {nf.format(p.maxKeys)}</dd>
        <dt>Team members</dt>
        <dd>up to {nf.format(p.maxMembers)}</dd>
        <dt>Project created</dt>
        <dd>{formatDate(d.project.createdAt)}</dd>
      </dl>
    </Card>
  );
}

export function DashboardPage() {
  const { project } = useProject();
  const q = useQuery({
    queryKey: ["dashboard", project.id],
    queryFn: () => get<Dashboard>(`/projects/${project.id}/dashboard`),
    staleTime: 0,
    refetchInterval: 30_000,
  });
  const [endpoint, setEndpoint] = useState("");
  if (q.isPending) return <Loading label="Loading usage" />;
  if (q.isError) return <ErrorMessage error={q.error} retry={() => q.refetch()} />;
  const d = q.data;
  // Per day for every endpoint, or for the one chosen above the charts.
  const days = d.days.map((x) => {
    const u = endpoint === "" ? x : (x.byEndpoint[endpoint] ?? { requests: 0, errors: 0, latencyMs: null });
    return {
      day: shortDay(x.day),
      requests: u.requests,
      errors: u.errors,
      p50: u.latencyMs?.p50 ?? null,
      p95: u.latencyMs?.p95 ?? null,
    };
  });
  const endpoints = [...d.endpoints].sort((a, b) => b.requests - a.requests);
  const errorRate = d.totals.requests > 0 ? (d.totals.errors / d.totals.requests) * 100 : 0;
  return (
    <div>
      <PageHeader
        title="Overview"
        subtitle={`Usage from ${formatDate(d.from)} to ${formatDate(d.to)} (UTC days)`}
      />
      <UsageAlerts />
      <div className="stats">
        <Stat
          label="Requests (30 days)"
          value={nf.format(d.totals.requests)}
          sub={`${nf.format(d.totals.batches)} batch calls`}
        />
        <Stat
          label="Names asked (30 days)"
          value={nf.format(d.totals.names)}
          sub="errors and refusals included; a batch call counts each input"
        />
        <Stat
          label="Errors"
          value={nf.format(d.totals.errors)}
          sub={`${errorRate.toFixed(1)}% of requests`}
        />
        <Stat label="Latency p50" value={d.totals.latencyMs ? `${d.totals.latencyMs.p50} ms` : "—"} />
        <Stat label="Latency p95" value={d.totals.latencyMs ? `${d.totals.latencyMs.p95} ms` : "—"} />
      </div>
      <div className="grid-2">
        <QuotaCard d={d} />
        <PlanCard d={d} />
      </div>
      {d.totals.requests === 0 ? (
        <Card title="Requests per day">
          <Empty title="No requests in the last 30 days">
            <p>Create an API key and call the API: usage appears here within seconds.</p>
          </Empty>
        </Card>
      ) : (
        <>
          <div className="chart-filter">
            <label htmlFor="endpoint-filter">Endpoint</label>
            <select id="endpoint-filter" value={endpoint} onChange={(e) => setEndpoint(e.target.value)}>
              <option value="">All endpoints</option>
              {d.endpoints.map((e) => (
                <option key={e.endpoint} value={e.endpoint}>
                  {e.endpoint}
                </option>
              ))}
            </select>
          </div>
          <Card title="Requests and errors per day">
            <div
              className="chart"
              role="img"
              aria-label={`Requests per day: ${nf.format(d.totals.requests)} in 30 days, ${nf.format(d.totals.errors)} errors`}
            >
              <ResponsiveContainer width="100%" height={260}>
                <BarChart data={days} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                  <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e5e7eb" />
                  <XAxis dataKey="day" tick={{ fontSize: 12 }} interval="preserveStartEnd" minTickGap={24} />
                  <YAxis allowDecimals={false} tick={{ fontSize: 12 }} width={48} />
                  <Tooltip />
                  <Legend />
                  <Bar dataKey="requests" name="Requests" fill={COLORS.requests} radius={[3, 3, 0, 0]} />
                  <Bar dataKey="errors" name="Errors" fill={COLORS.errors} radius={[3, 3, 0, 0]} />
                </BarChart>
              </ResponsiveContainer>
            </div>
          </Card>
          <Card title="Latency per day (ms)">
            <div className="chart" role="img" aria-label="Latency percentiles per day">
              <ResponsiveContainer width="100%" height={220}>
                <LineChart data={days} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
                  <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e5e7eb" />
                  <XAxis dataKey="day" tick={{ fontSize: 12 }} interval="preserveStartEnd" minTickGap={24} />
                  <YAxis tick={{ fontSize: 12 }} width={48} />
                  <Tooltip />
                  <Legend />
                  {(["p50", "p95"] as const).map((k) => (
                    <Line
                      key={k}
                      type="monotone"
                      dataKey={k}
                      name={k}
                      stroke={COLORS[k]}
                      dot={{ r: 3 }}
                      connectNulls
                      strokeWidth={2}
                    />
                  ))}
                </LineChart>
              </ResponsiveContainer>
            </div>
          </Card>
        </>
      )}
      <Card title="Per endpoint">
        {endpoints.length === 0 ? (
          <Empty title="No endpoint called yet" />
        ) : (
          <>
            <div className="chart" role="img" aria-label="Requests per endpoint">
              <ResponsiveContainer width="100%" height={Math.max(120, endpoints.length * 36)}>
                <BarChart
                  data={endpoints}
                  layout="vertical"
                  margin={{ top: 4, right: 16, bottom: 0, left: 8 }}
                >
                  <XAxis type="number" allowDecimals={false} tick={{ fontSize: 12 }} />
                  <YAxis type="category" dataKey="endpoint" width={120} tick={{ fontSize: 12 }} />
                  <Tooltip />
                  <Bar dataKey="requests" name="Requests" fill={COLORS.requests} radius={[0, 3, 3, 0]} />
                  <Bar dataKey="errors" name="Errors" fill={COLORS.errors} radius={[0, 3, 3, 0]} />
                </BarChart>
              </ResponsiveContainer>
            </div>
            <DataTable
              label="Requests per endpoint, table"
              columns={["Endpoint", ...["Requests", "Names", "Errors", "p50", "p95", "p99"].map(num)]}
            >
              {endpoints.map((e) => (
                <tr key={e.endpoint}>
                  <td>
                    <code>{e.endpoint}</code>
                  </td>
                  <td className="num">
                    {nf.format(e.requests)}
                    {e.batches > 0 ? ` (${nf.format(e.batches)} batch)` : ""}
                  </td>
                  <td className="num">{nf.format(e.names)}</td>
                  <td className="num">{nf.format(e.errors)}</td>
                  <td className="num">{e.latencyMs ? `${e.latencyMs.p50} ms` : "—"}</td>
                  <td className="num">{e.latencyMs ? `${e.latencyMs.p95} ms` : "—"}</td>
                  <td className="num">{e.latencyMs ? `${e.latencyMs.p99} ms` : "—"}</td>
                </tr>
              ))}
            </DataTable>
          </>
        )}
      </Card>
      <ProjectAbout />
    </div>
  );
}
