import { Badge, Card, DataTable, Empty, formatDateTime, QueryState } from "../../../ui";
import { isoOf, type TestResult, useDeliveries, type Webhook } from "../api/webhooks.api";

const TONES: Record<string, string> = {
  delivered: "success",
  failed: "danger",
  refused: "danger",
  gave_up: "danger",
};

/** The answer of "send a test event", as it came back. */
export function TestOutcome({ result }: { result: TestResult }) {
  const ok = result.outcome === "delivered";
  return (
    <p className={`alert ${ok ? "alert-success" : "alert-warning"}`} role="status">
      <span>
        Test event <code>{result.msgId}</code>: {result.outcome}
        {result.statusCode !== null && <> (HTTP {result.statusCode})</>} in {result.latencyMs} ms
        {result.error && <>: {result.error}</>}
      </span>
    </p>
  );
}

/** A webhook's delivery log: each attempt, newest first (refreshed while shown). */
export function DeliveryLog({ projectId, hook }: { projectId: number; hook: Webhook }) {
  const q = useDeliveries(projectId, hook.id);
  return (
    <Card title={`Deliveries to ${hook.url}`} className="card-flush">
      <QueryState
        query={q}
        loading="Loading the delivery log"
        empty={
          <Empty title="No deliveries yet">Events and test events sent to this endpoint appear here.</Empty>
        }
      >
        {(attempts) => (
          <DataTable
            label="Delivery log"
            columns={["When", "Event", "Attempt", "Status", "Outcome", "Latency", "Start of the response"]}
          >
            {attempts.map((a) => (
              <tr key={a.id}>
                <td className="when">{formatDateTime(isoOf(a.at))}</td>
                <td>
                  <code>{a.eventType}</code>
                </td>
                <td>{a.attempt}</td>
                <td>{a.statusCode ?? "—"}</td>
                <td>
                  <Badge tone={TONES[a.outcome] ?? "neutral"}>{a.outcome}</Badge>
                </td>
                <td>{a.latencyMs} ms</td>
                <td>
                  <code className="response-start">{(a.error ?? a.responseStart).slice(0, 120) || "—"}</code>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryState>
    </Card>
  );
}
