import { type ReactNode, useEffect, useId, useRef } from "react";

export { type Column, DataTable, num, RowAction, TableHead, TableWrap } from "./ui-table";

export function Loading({ label = "Loading" }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label}…</span>
    </div>
  );
}

export function ErrorMessage({ error, retry }: { error: unknown; retry?: () => void }) {
  if (error === null || error === undefined) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="alert alert-error" role="alert">
      <span>{message}</span>
      {retry && (
        <button type="button" className="btn btn-small btn-secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Notice({
  children,
  tone = "info",
}: {
  children: ReactNode;
  tone?: "info" | "success" | "warning";
}) {
  return (
    <div className={`alert alert-${tone}`} role={tone === "warning" ? "alert" : "status"}>
      {children}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <p className="state-title">{title}</p>
      {children && <div className="state-body">{children}</div>}
    </div>
  );
}

/** What `QueryState` reads of a query (TanStack Query's result has it all). */
export interface QueryLike<T> {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: T | undefined;
  refetch: () => unknown;
}

/**
 * A query's states: `Loading` (named by `loading`) until the first answer, then its error with
 * "Try again" (a failed refresh keeps the data shown below it), then `empty` for an empty list
 * where one is given, else `children` with the data.
 */
export function QueryState<T>({
  query,
  loading,
  empty,
  children,
}: {
  query: QueryLike<T>;
  loading: string;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading label={loading} />;
  const data = query.data;
  const isEmpty = empty !== undefined && Array.isArray(data) && data.length === 0;
  return (
    <>
      {query.isError && <ErrorMessage error={query.error} retry={() => query.refetch()} />}
      {data !== undefined && (isEmpty ? empty : children(data))}
    </>
  );
}

/**
 * The page's announcement after a navigation (app.tsx's RouteAnnouncer marks one as due): the
 * document title names the page and focus moves to its heading. The heading announces itself when
 * it mounts, so a lazily loaded page is named once it has rendered, on a direct load too.
 */
let announcementDue = false;
export function announceNextPage(): void {
  announcementDue = true;
}
export function announcePage(h1: HTMLElement | null): void {
  if (!announcementDue || h1 === null) return;
  announcementDue = false;
  document.title = `${h1.textContent} · omniname console`;
  h1.tabIndex = -1;
  h1.focus({ preventScroll: true });
}

/** A page's `<h1>`: names the page in the document title and takes focus after a navigation. */
export function PageTitle({ children }: { children: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new heading text is a new page
  useEffect(() => announcePage(ref.current), [children]);
  return <h1 ref={ref}>{children}</h1>;
}

export function PageHeader({
  title,
  subtitle,
  actions,
}: {
  title: string;
  subtitle?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div>
        <PageTitle>{title}</PageTitle>
        {subtitle && <p className="subtitle">{subtitle}</p>}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

export function Card({
  title,
  children,
  actions,
  className,
}: {
  title?: string;
  children: ReactNode;
  actions?: ReactNode;
  className?: string;
}) {
  return (
    <section className={`card ${className ?? ""}`} aria-label={title}>
      {(title || actions) && (
        <div className="card-head">
          {title && <h2>{title}</h2>}
          {actions}
        </div>
      )}
      {children}
    </section>
  );
}

/** A labelled input whose error (from the browser or the server) is tied to it for screen readers. */
export function Field({
  label,
  error,
  hint,
  children,
}: {
  label: string;
  error?: string | null;
  hint?: ReactNode;
  children: (props: { id: string; "aria-invalid": boolean; "aria-describedby"?: string }) => ReactNode;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ");
  return (
    <div className={`field ${error ? "field-invalid" : ""}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": Boolean(error), "aria-describedby": described || undefined })}
      {hint && (
        <div className="field-hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
      {error && (
        <div className="field-error" id={`${id}-error`} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

export function Switch({
  checked,
  onChange,
  label,
  disabled,
  description,
}: {
  checked: boolean;
  onChange: (v: boolean) => void;
  label: string;
  disabled?: boolean;
  description?: ReactNode;
}) {
  const id = useId();
  return (
    <div className={`switch-row ${disabled ? "is-disabled" : ""}`}>
      <div>
        <span className="switch-label" id={`${id}-l`}>
          {label}
        </span>
        {description && (
          <span className="switch-desc" id={`${id}-d`}>
            {description}
          </span>
        )}
      </div>
      <button
        type="button"
        role="switch"
        aria-checked={checked}
        aria-labelledby={`${id}-l`}
        aria-describedby={description ? `${id}-d` : undefined}
        disabled={disabled}
        className={`switch ${checked ? "on" : ""}`}
        onClick={() => onChange(!checked)}
      >
        <span className="switch-knob" aria-hidden="true" />
      </button>
    </div>
  );
}

/** A modal confirmation on the native <dialog> (focus trap, Escape to close). */
export function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose}>
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

/**
 * A form's or dialog's buttons: `cancel` (when `onCancel` is given), then the action, a submit
 * button, or a plain button calling `onAction`; `danger` marks a destructive action.
 */
export function FormActions({
  action,
  onAction,
  onCancel,
  cancel = "Cancel",
  danger = false,
  disabled = false,
}: {
  action: ReactNode;
  onAction?: () => void;
  onCancel?: () => void;
  cancel?: string;
  danger?: boolean;
  disabled?: boolean;
}) {
  return (
    <div className="form-actions">
      {onCancel && (
        <button type="button" className="btn btn-secondary" onClick={onCancel}>
          {cancel}
        </button>
      )}
      <button
        type={onAction ? "button" : "submit"}
        className={`btn ${danger ? "btn-danger" : "btn-primary"}`}
        disabled={disabled}
        onClick={onAction}
      >
        {action}
      </button>
    </div>
  );
}

/** A confirmation of a destructive action on `item` (open while it is not null): Cancel, or `confirm`. */
export function ConfirmDialog<T>({
  item,
  title,
  confirm,
  error,
  pending,
  onCancel,
  onConfirm,
  children,
}: {
  item: T | null;
  title: string;
  confirm: string;
  error: unknown;
  pending: boolean;
  onCancel: () => void;
  onConfirm: (item: T) => void;
  children: ReactNode;
}) {
  return (
    <Dialog open={item !== null} title={title} onClose={onCancel}>
      {children}
      <ErrorMessage error={error} />
      <FormActions
        action={confirm}
        danger
        disabled={pending}
        onCancel={onCancel}
        onAction={() => item !== null && onConfirm(item)}
      />
    </Dialog>
  );
}

export function Badge({ children, tone = "neutral" }: { children: ReactNode; tone?: string }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleDateString("en-GB", { year: "numeric", month: "short", day: "numeric" });
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "never";
  return new Date(iso).toLocaleString("en-GB", {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  });
}

export const nf = new Intl.NumberFormat("en-US");
