import { useMemo } from "react";
import { PROVIDER_ORDER, PROVIDERS } from "@omniname/wire/providers";
import { useProject } from "../../../project-context";
import type { CollisionException } from "../../../types";
import { Card, DataTable, Empty, ErrorMessage, Loading } from "../../../ui";
import { useServerError, useSettingsDraft } from "../api/settings-draft";
import { ExceptionRow } from "./exception-row";
import { providerLabel } from "./labels";
import { SaveBar, SettingsHeader } from "./save-bar";

export function CollisionsPage() {
  const { project, can } = useProject();
  const d = useSettingsDraft(project.id);
  const editable = can("settings.write");
  const serverError = useServerError(d);
  const s = d.draft;
  const order = useMemo(() => {
    const active = PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon);
    const listed = (s?.providerPriority ?? []).filter((p) => active.includes(p));
    return [...listed, ...active.filter((p) => !listed.includes(p))];
  }, [s]);
  if (d.saved.isPending || (s === null && !d.saved.isError))
    return <Loading label="Loading collision rules" />;
  if (d.saved.isError || s === null)
    return <ErrorMessage error={d.saved.error} retry={() => d.saved.refetch()} />;
  const move = (i: number, by: number) => {
    const next = [...order];
    const [p] = next.splice(i, 1);
    next.splice(i + by, 0, p);
    d.setDraft({ ...s, providerPriority: next });
    // Keep the keyboard focus on the moved item's button.
    window.setTimeout(() => document.getElementById(`prio-${p}-${by < 0 ? "up" : "down"}`)?.focus(), 0);
  };
  const exceptions = s.exceptions ?? [];
  const setExceptions = (list: CollisionException[]) => d.setDraft({ ...s, exceptions: list });
  const generalError =
    serverError && !/^exceptions\[\d+\]/.test(serverError.field ?? "") ? serverError : null;
  return (
    <div>
      <SettingsHeader
        d={d}
        title="Collision management"
        subtitle="When a name exists in several namespaces, decide which one your API keys get."
        error={generalError}
      />
      <div className="grid-2 grid-2-wide">
        <Card title="Provider priority">
          <p className="muted small">
            Most preferred first. Each place ahead adds to the score, so a preferred provider wins collisions.
          </p>
          <ol className="priority" aria-label="Provider priority, most preferred first">
            {order.map((p, i) => (
              <li key={p} className="priority-item">
                <span className="priority-rank" aria-hidden="true">
                  {i + 1}
                </span>
                <span className="priority-name">
                  {providerLabel(p)} <code>{p}</code>
                </span>
                {editable && (
                  <span className="priority-moves">
                    <button
                      id={`prio-${p}-up`}
                      type="button"
                      className="btn btn-icon"
                      disabled={i === 0}
                      aria-label={`Move ${providerLabel(p)} up`}
                      onClick={() => move(i, -1)}
                    >
                      ↑
                    </button>
                    <button
                      id={`prio-${p}-down`}
                      type="button"
                      className="btn btn-icon"
                      disabled={i === order.length - 1}
                      aria-label={`Move ${providerLabel(p)} down`}
                      onClick={() => move(i, 1)}
                    >
                      ↓
                    </button>
                  </span>
                )}
              </li>
            ))}
          </ol>
        </Card>
        <Card title="How collisions are decided">
          <ol className="explain-list">
            <li>An exception for the name (or its TLD) wins outright.</li>
            <li>Otherwise the highest score wins: age, records, expiry and your provider priority.</li>
            <li>Ties go to the earlier registration.</li>
          </ol>
        </Card>
      </div>
      <Card
        title="Exceptions"
        actions={
          editable && (
            <button
              type="button"
              className="btn btn-small btn-secondary"
              onClick={() => {
                setExceptions([...exceptions, { domain: "", provider: order[0] ?? "NAMESPACE_A" }]);
                window.setTimeout(() => {
                  const inputs = document.querySelectorAll<HTMLInputElement>(".exceptions input");
                  inputs[inputs.length - 1]?.focus();
                }, 0);
              }}
            >
              Add exception
            </button>
          )
        }
      >
        <p className="muted small">
          A domain (alice.wallet) or a whole TLD (wallet) always resolves to the namespace you choose.
        </p>
        {exceptions.length === 0 ? (
          <Empty title="No exceptions">
            <p>Without exceptions, the score and the priority above decide every collision.</p>
          </Empty>
        ) : (
          <DataTable
            label="Exceptions table"
            className="exceptions"
            columns={["Applies to", "Name or TLD", "Preferred namespace", "Network", null]}
          >
            {exceptions.map((ex, i) => (
              <ExceptionRow
                // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
                key={i}
                ex={ex}
                index={i}
                editable={editable}
                error={serverError}
                onChange={(e) => setExceptions(exceptions.map((x, j) => (j === i ? e : x)))}
                onRemove={() => setExceptions(exceptions.filter((_, j) => j !== i))}
              />
            ))}
          </DataTable>
        )}
      </Card>
      <SaveBar d={d} editable={editable} what="rules" errorElsewhere={serverError !== null} />
    </div>
  );
}
