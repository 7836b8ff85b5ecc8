/** A before or after value of an audit entry: "—" when absent, else its JSON, compact. */
export function AuditValue({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  return <code className="audit-value">{JSON.stringify(value, null, 1).replace(/\n\s*/g, " ")}</code>;
}
