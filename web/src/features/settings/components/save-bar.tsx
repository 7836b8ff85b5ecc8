import { ErrorMessage, Notice, PageHeader } from "../../../ui";
import type { Draft } from "../api/settings-draft";
import { DryRunResult } from "./dry-run-result";

/** A settings page's header: its title, the notice of a draft restored after signing in again, its error. */
export function SettingsHeader({
  d,
  title,
  subtitle,
  error,
}: {
  d: Draft;
  title: string;
  subtitle: string;
  error: unknown;
}) {
  return (
    <>
      <PageHeader title={title} subtitle={subtitle} />
      {d.restored && (
        <Notice tone="warning">
          Your unsaved changes from before you signed in again are restored below.
        </Notice>
      )}
      <ErrorMessage error={error} />
    </>
  );
}

/**
 * The draft's save bar (discard, dry run, save) while it has changes, or its "saved" notice; to a
 * role that cannot change the settings, a note that it can only view `what`.
 */
export function SaveBar({
  d,
  editable,
  what,
  errorElsewhere,
}: {
  d: Draft;
  editable: boolean;
  what: string;
  errorElsewhere: boolean;
}) {
  if (!editable)
    return (
      <p className="muted small">{`Your role can view these ${what}; owners, admins and developers can change them.`}</p>
    );
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
