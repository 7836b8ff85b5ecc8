import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { NETWORK_ORDER, NETWORKS } from "@omniname/wire/networks";
import { post } from "../../../api";
import type { TryAnswer, TryBody, TryMethod } from "../../../types";
import { Card, DataTable, Empty, ErrorMessage, Field, num, PageHeader, TableHead } from "../../../ui";
import { useProject } from "../../../project-context";
import { providerLabel } from "../../settings/components/labels";

const METHODS: { value: TryMethod; label: string; help: string }[] = [
  {
    value: "resolve",
    label: "Resolve",
    help: "The one record a name resolves to, after collisions are settled.",
  },
  {
    value: "deep-resolve",
    label: "Deep resolve",
    help: "Every record of the name across namespaces and networks, best first.",
  },
  { value: "reverse-resolve", label: "Reverse resolve", help: "The names an address owns." },
];

type Rec = Extract<TryAnswer["answer"], { result: true }>["data"];

function Records({ data }: { data: Rec }) {
  const list = Array.isArray(data) ? data : [data];
  if (list.length === 0) return <Empty title="No record" />;
  return (
    <DataTable label="Records" columns={["Name", "Namespace", "Network", "Owner", num("Score")]}>
      {list.map((r, i) => (
        <tr key={`${r.provider}-${r.network}-${r.domain}`} className={i === 0 ? "row-winner" : undefined}>
          <td>
            <strong>{r.domain}</strong>
            {i === 0 && list.length > 1 && <span className="badge badge-success">winner</span>}
            {r.spam && <span className="badge badge-danger">spam</span>}
          </td>
          <td>{providerLabel(r.provider)}</td>
          <td>{r.network}</td>
          <td>
            <code className="addr">{r.ownerAddress}</code>
          </td>
          <td className="num">{r.score}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function Explain({ rows }: { rows: NonNullable<TryAnswer["explain"]> }) {
  return (
    <Card title="Why this answer: the score's rules">
      {rows.map((row, i) => (
        <div key={`${row.provider}-${row.network}-${row.domain}`} className="explain">
          <h3>
            {i + 1}. {row.domain} · {providerLabel(row.provider)} on {row.network} · score{" "}
            <strong>{row.score}</strong>
          </h3>
          <table className="table table-compact">
            <TableHead columns={["Rule", num("Points"), "Why"]} />
            <tbody>
              {row.rules.map((r) => (
                <tr key={r.rule + r.description}>
                  <td>
                    <code>{r.rule}</code>
                  </td>
                  <td className={`num ${r.points < 0 ? "neg" : r.points > 0 ? "pos" : ""}`}>
                    {r.points > 0 ? `+${r.points}` : r.points}
                  </td>
                  <td>{r.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </Card>
  );
}

export function TryPage() {
  const { project } = useProject();
  const [method, setMethod] = useState<TryMethod>("resolve");
  const [query, setQuery] = useState("");
  const [network, setNetwork] = useState("");
  const [explain, setExplain] = useState(true);
  const run = useMutation({
    mutationFn: (body: TryBody) => post<TryAnswer>(`/projects/${project.id}/try`, body),
  });
  const reverse = method === "reverse-resolve";
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const body: TryBody = reverse
      ? { method, address: query.trim(), ...(network ? { network } : {}) }
      : { method, domain: query.trim(), explain, ...(network ? { network } : {}) };
    run.mutate(body);
  };
  const r = run.data;
  return (
    <div>
      <PageHeader
        title="Try it"
        subtitle="Resolve names with this project's settings, exactly as your API keys would. Tries do not count against your quota."
      />
      <Card>
        <form className="form form-inline" onSubmit={submit}>
          <fieldset className="segmented">
            <legend className="sr-only">Method</legend>
            {METHODS.map((m) => (
              <label key={m.value} className={method === m.value ? "is-active" : undefined}>
                <input
                  type="radio"
                  name="method"
                  value={m.value}
                  checked={method === m.value}
                  onChange={() => setMethod(m.value)}
                />
                {m.label}
              </label>
            ))}
          </fieldset>
          <p className="muted small">{METHODS.find((m) => m.value === method)?.help}</p>
          <div className="form-row">
            <Field label={reverse ? "Wallet address" : "Domain name"}>
              {(p) => (
                <input
                  {...p}
                  required
                  value={query}
                  placeholder={reverse ? "0x…" : "alice.wallet"}
                  onChange={(e) => setQuery(e.target.value)}
                  spellCheck={false}
                  autoCapitalize="off"
                />
              )}
            </Field>
            <Field label="Network">
              {(p) => (
                <select {...p} value={network} onChange={(e) => setNetwork(e.target.value)}>
                  <option value="">Any</option>
                  {NETWORK_ORDER.filter((n) => !NETWORKS[n].comingSoon).map((n) => (
                    <option key={n} value={n}>
                      {n}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {!reverse && (
              <div className="check check-inline">
                <input
                  id="explain"
                  type="checkbox"
                  checked={explain}
                  onChange={(e) => setExplain(e.target.checked)}
                />
                <label htmlFor="explain">Explain the score</label>
              </div>
            )}
            <button type="submit" className="btn btn-primary" disabled={run.isPending || query.trim() === ""}>
              {run.isPending ? "Resolving…" : "Run"}
            </button>
          </div>
        </form>
      </Card>
      <ErrorMessage error={run.error} />
      {r && (
        <>
          <Card title="Answer" actions={<code className="muted small">GET {r.request}</code>}>
            {r.answer.result ? (
              <Records data={r.answer.data} />
            ) : (
              <div className="alert alert-info" role="status">
                <span>
                  <strong>{r.status}</strong> · {r.answer.error.message} <code>{r.answer.error.code}</code>
                </span>
              </div>
            )}
            <details className="raw">
              <summary>Raw JSON answer</summary>
              <pre>{JSON.stringify(r.answer, null, 2)}</pre>
            </details>
          </Card>
          {r.explain && r.explain.length > 0 && <Explain rows={r.explain} />}
        </>
      )}
    </div>
  );
}
