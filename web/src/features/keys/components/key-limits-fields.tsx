import { useId } from "react";
import { NETWORK_ORDER, NETWORKS } from "@omniname/wire/networks";
import { PROVIDER_ORDER, PROVIDERS } from "@omniname/wire/providers";
import { Field } from "../../../ui";
import { KEY_ENDPOINTS, type LimitsDraft } from "../api/keys.api";

function CheckGroup({
  legend,
  hint,
  names,
  value,
  onChange,
  error,
}: {
  legend: string;
  hint: string;
  names: readonly string[];
  value: string[];
  onChange: (v: string[]) => void;
  error: string | null;
}) {
  const id = useId();
  return (
    <fieldset
      className={`check-group ${error ? "field-invalid" : ""}`}
      aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
    >
      <legend>{legend}</legend>
      <div className="field-hint" id={`${id}-hint`}>
        {hint}
      </div>
      <div className="check-grid">
        {names.map((n) => (
          <div className="check check-inline" key={n}>
            <input
              id={`${id}-${n}`}
              type="checkbox"
              checked={value.includes(n)}
              onChange={(e) =>
                onChange(
                  e.target.checked
                    ? names.filter((x) => x === n || value.includes(x))
                    : value.filter((x) => x !== n),
                )
              }
            />
            <label htmlFor={`${id}-${n}`}>
              <code>{n}</code>
            </label>
          </div>
        ))}
      </div>
      {error && (
        <div className="field-error" id={`${id}-error`} role="alert">
          {error}
        </div>
      )}
    </fieldset>
  );
}

/**
 * A key's limits: the endpoints, networks and providers it may use (none ticked: all) and its
 * expiry. `errorField`/`error`: the server's field error, shown at its field.
 */
export function KeyLimitsFields({
  draft,
  onChange,
  errorField,
  error,
  showExpiry = true,
}: {
  draft: LimitsDraft;
  onChange: (d: LimitsDraft) => void;
  errorField: string | null;
  error: string | null;
  showExpiry?: boolean;
}) {
  const at = (f: string) => (errorField === f ? error : null);
  return (
    <div className="key-limits">
      <CheckGroup
        legend="Endpoints"
        hint="None ticked: every endpoint."
        names={KEY_ENDPOINTS}
        value={draft.endpoints}
        onChange={(endpoints) => onChange({ ...draft, endpoints })}
        error={at("endpoints")}
      />
      <CheckGroup
        legend="Networks"
        hint="None ticked: every network the project serves. Others are invisible to the key."
        names={NETWORK_ORDER.filter((n) => !NETWORKS[n].comingSoon || draft.networks.includes(n))}
        value={draft.networks}
        onChange={(networks) => onChange({ ...draft, networks })}
        error={at("networks")}
      />
      <CheckGroup
        legend="Providers"
        hint="None ticked: every provider the project serves."
        names={PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon || draft.providers.includes(p))}
        value={draft.providers}
        onChange={(providers) => onChange({ ...draft, providers })}
        error={at("providers")}
      />
      {showExpiry && (
        <Field
          label="Expires (optional)"
          hint="Empty: never. After it the key is refused."
          error={at("expiresAt")}
        >
          {(p) => (
            <input
              {...p}
              type="datetime-local"
              value={draft.expires}
              onChange={(e) => onChange({ ...draft, expires: e.target.value })}
            />
          )}
        </Field>
      )}
    </div>
  );
}
