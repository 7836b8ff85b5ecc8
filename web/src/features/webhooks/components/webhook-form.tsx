import { useState } from "react";
import { useProject } from "../../../project-context";
import { ErrorMessage, Field, FormActions } from "../../../ui";
import {
  checkDraft,
  EVENT_TYPES,
  FILTERS,
  type FieldErrors,
  type FilterName,
  fieldErrorsOf,
  urlHint,
  useAddressPolicy,
  type WebhookDraft,
} from "../api/webhooks.api";

const FILTER_LABELS: Record<FilterName, [string, string]> = {
  domains: ["Domains", "e.g. alice.wallet, bob.crypto"],
  tlds: ["Top-level domains", "e.g. wallet, crypto"],
  addresses: ["Addresses", "an owner or a record value, e.g. 0x7099…"],
  networks: ["Networks", "e.g. POLYGON, ETHEREUM"],
  providers: ["Providers", "e.g. NAMESPACE_A (aliases such as ENS work)"],
};

/**
 * A webhook's fields: URL, description, event types (at least one), filters. Checks what the
 * browser can, then shows the server's refusal (the SSRF guard, an unknown filter value) on the
 * field it concerns.
 */
export function WebhookForm({
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  initial: WebhookDraft;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (d: WebhookDraft) => void;
  onCancel?: () => void;
}) {
  const { project } = useProject();
  const policy = useAddressPolicy(project.id);
  const [draft, setDraft] = useState<WebhookDraft>(initial);
  const [local, setLocal] = useState<FieldErrors>({});
  const server = fieldErrorsOf(error);
  // What the browser found first; the server's answer only to the draft it was given.
  const errors: FieldErrors = Object.keys(local).length > 0 ? local : (server ?? {});
  const toggle = (type: string, on: boolean) =>
    setDraft({
      ...draft,
      eventTypes: on ? [...draft.eventTypes, type] : draft.eventTypes.filter((t) => t !== type),
    });
  return (
    <form
      className="form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const found = checkDraft(draft);
        setLocal(found);
        if (Object.keys(found).length === 0) onSubmit(draft);
      }}
    >
      <Field label="Endpoint URL" error={errors.url} hint={urlHint(policy.data)}>
        {(p) => (
          <input
            {...p}
            type="text"
            inputMode="url"
            autoComplete="off"
            maxLength={2048}
            value={draft.url}
            onChange={(e) => setDraft({ ...draft, url: e.target.value })}
          />
        )}
      </Field>
      <Field label="Description" error={errors.description}>
        {(p) => (
          <input
            {...p}
            maxLength={200}
            value={draft.description}
            onChange={(e) => setDraft({ ...draft, description: e.target.value })}
          />
        )}
      </Field>
      <fieldset
        className="webhook-types"
        aria-describedby={errors.eventTypes ? "event-types-error" : undefined}
      >
        <legend>Event types</legend>
        {EVENT_TYPES.map((type) => (
          <div className="check" key={type}>
            <input
              id={`type-${type}`}
              type="checkbox"
              checked={draft.eventTypes.includes(type)}
              onChange={(e) => toggle(type, e.target.checked)}
            />
            <label htmlFor={`type-${type}`}>
              <code>{type}</code>
            </label>
          </div>
        ))}
        {errors.eventTypes && (
          <div className="field-error" id="event-types-error" role="alert">
            {errors.eventTypes}
          </div>
        )}
      </fieldset>
      <details className="webhook-filters" open={Object.values(draft.filters).some(Boolean) || undefined}>
        <summary>Filters (optional: comma-separated; an event must match every filter given)</summary>
        <div className="grid-2">
          {FILTERS.map((k) => (
            <Field key={k} label={FILTER_LABELS[k][0]} hint={FILTER_LABELS[k][1]}>
              {(p) => (
                <input
                  {...p}
                  value={draft.filters[k]}
                  onChange={(e) => setDraft({ ...draft, filters: { ...draft.filters, [k]: e.target.value } })}
                />
              )}
            </Field>
          ))}
        </div>
        {errors.filters && (
          <div className="field-error" role="alert">
            {errors.filters}
          </div>
        )}
      </details>
      {!server && <ErrorMessage error={error} />}
      <FormActions action={pending ? "Saving…" : submitLabel} disabled={pending} onCancel={onCancel} />
    </form>
  );
}
