import type { ReactNode } from "react";

/**
 * A table that scrolls sideways on a narrow screen: a named region in the tab order, so a
 * keyboard can scroll it too (axe's scrollable-region-focusable).
 */
export function TableWrap({
  label,
  className,
  children,
}: {
  label: string;
  className?: string;
  children: ReactNode;
}) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section className={`table-wrap ${className ?? ""}`} aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

/** A column of `TableHead`: its label, or a label and the cell's class (`num` right-aligns it). */
export type Column = string | null | { label: string; className: string };

/** A right-aligned column (a number's). */
export function num(label: string): Column {
  return { label, className: "num" };
}

/** A table's header row, a column per label; `null` is the actions column, named for screen readers only. */
export function TableHead({ columns }: { columns: Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) =>
          c === null ? (
            <th key="actions" scope="col">
              <span className="sr-only">Actions</span>
            </th>
          ) : typeof c === "string" ? (
            <th key={c} scope="col">
              {c}
            </th>
          ) : (
            <th key={c.label} scope="col" className={c.className}>
              {c.label}
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}

/**
 * A table of rows in its scrolling region: `label` names the region, `columns` the header
 * (`TableHead`), `children` are the body's rows; `className` is added to the table's `table`.
 */
export function DataTable({
  label,
  columns,
  className,
  wrapClassName,
  children,
}: {
  label: string;
  columns: Column[];
  className?: string;
  wrapClassName?: string;
  children: ReactNode;
}) {
  return (
    <TableWrap label={label} className={wrapClassName}>
      <table className={className ? `table ${className}` : "table"}>
        <TableHead columns={columns} />
        <tbody>{children}</tbody>
      </table>
    </TableWrap>
  );
}

/** A row's action button: `label` seen, `label` and the row's `target` heard by a screen reader. */
export function RowAction({
  label,
  target,
  onClick,
  danger = false,
  disabled = false,
}: {
  label: string;
  target: string;
  onClick: () => void;
  danger?: boolean;
  disabled?: boolean;
}) {
  return (
    <button
      type="button"
      className={`btn btn-small ${danger ? "btn-ghost-danger" : "btn-secondary"}`}
      disabled={disabled}
      onClick={onClick}
    >
      {label}
      <span className="sr-only"> {target}</span>
    </button>
  );
}
