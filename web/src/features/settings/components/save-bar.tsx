import { ErrorMessage, Notice } from "../../../ui";
import type { Draft } from "../api/settings-draft";
import { DryRunResult } from "./dry-run-result";

export function SaveBar({ d, errorElsewhere }: { d: Draft; errorElsewhere: boolean }) {
  if (!d.dirty && !d.save.isSuccess) return null;
  return (
    <>
      {d.dry.data && d.dirty && <DryRunResult r={d.dry.data} />}
      <section className="savebar" aria-label="Unsaved changes">
        {d.save.isSuccess && !d.dirty ? (
          <Notice tone="success">Saved. The API applies the new settings within seconds.</Notice>
        ) : (
          <>
            {d.dry.error && !errorElsewhere && <ErrorMessage error={d.dry.error} />}
            {d.save.error && !errorElsewhere && <ErrorMessage error={d.save.error} />}
            <div className="savebar-actions">
              <span className="muted">You have unsaved changes.</span>
              <button type="button" className="btn btn-secondary" onClick={d.discard}>
                Discard
              </button>
              <button
                type="button"
                className="btn btn-secondary"
                disabled={d.dry.isPending}
                onClick={() => d.draft && d.dry.mutate(d.draft)}
              >
                {d.dry.isPending ? "Computing…" : "Preview impact (dry run)"}
              </button>
              <button
                type="button"
                className="btn btn-primary"
                disabled={d.save.isPending}
                onClick={() => d.draft && d.save.mutate(d.draft)}
              >
                {d.save.isPending ? "Saving…" : "Save changes"}
              </button>
            </div>
          </>
        )}
      </section>
    </>
  );
}
