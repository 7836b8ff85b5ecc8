import { useEffect, useRef } from "react";
import type { DryRunAnswer } from "../../../types";
import { TableWrap } from "../../../ui";
import { networkLabel, providerLabel } from "./labels";

function Winner({ w }: { w: DryRunAnswer["names"][number]["before"] }) {
  if (w === null) return <span className="muted">not served</span>;
  return (
    <span>
      {providerLabel(w.namespace)} <span className="muted">on {networkLabel(w.network)}</span>
      <br />
      <code className="addr">{w.owner}</code>
    </span>
  );
}

export function DryRunResult({ r }: { r: DryRunAnswer }) {
  const ref = useRef<HTMLElement>(null);
  // The answer appears below the settings: bring it into view.
  useEffect(() => {
    ref.current?.scrollIntoView({ block: "nearest" });
  }, []);
  return (
    <section ref={ref} className="card dryrun" aria-label="Dry run result" aria-live="polite">
      <h3>
        {r.changed === 0
          ? `No name changes winner (${r.scanned.toLocaleString("en-US")} names checked).`
          : r.changed === 1
            ? "1 name changes winner"
            : `${r.changed.toLocaleString("en-US")} names change winner`}
      </h3>
      {r.changed > 0 && (
        <>
          <p className="muted small">
            Out of {r.scanned.toLocaleString("en-US")} {r.scanned === 1 ? "name" : "names"} checked (the names
            this change can affect).
            {r.truncated ? ` The first ${r.names.length} are listed.` : ""}
          </p>
          <TableWrap label="Names whose winner changes">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Winner now</th>
                  <th scope="col">Winner after saving</th>
                </tr>
              </thead>
              <tbody>
                {r.names.map((n) => (
                  <tr key={n.name}>
                    <td>
                      <strong>{n.name}</strong>
                    </td>
                    <td>
                      <Winner w={n.before} />
                    </td>
                    <td>
                      <Winner w={n.after} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </section>
  );
}
