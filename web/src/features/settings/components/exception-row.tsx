import { PROVIDER_ORDER, PROVIDERS } from "@omniname/wire/providers";
import type { ApiError } from "../../../api";
import type { CollisionException, Network, Provider } from "../../../types";
import { RowAction } from "../../../ui";
import { networkLabel, providerLabel } from "./labels";

type Kind = "domain" | "tld";

function fieldOf(e: ApiError | null, index: number, field: string): string | null {
  if (!e) return null;
  const f = e.field;
  if (f === `exceptions[${index}].${field}`) return e.serverMessage.replace(/^[^:]+:\s*/, "");
  return null;
}

function rowError(e: ApiError | null, index: number): string | null {
  if (!e) return null;
  return e.field === `exceptions[${index}]` ? e.serverMessage.replace(/^[^:]+:\s*/, "") : null;
}

export function ExceptionRow({
  ex,
  index,
  editable,
  error,
  onChange,
  onRemove,
}: {
  ex: CollisionException;
  index: number;
  editable: boolean;
  error: ApiError | null;
  onChange: (e: CollisionException) => void;
  onRemove: () => void;
}) {
  const kind: Kind = ex.tld !== undefined ? "tld" : "domain";
  const value = kind === "tld" ? (ex.tld ?? "") : (ex.domain ?? "");
  const valueErr = fieldOf(error, index, kind);
  const providerErr = fieldOf(error, index, "provider");
  const networkErr = fieldOf(error, index, "network");
  const rowErr = rowError(error, index);
  const n = index + 1;
  const networks = PROVIDERS[ex.provider].networks as readonly Network[];
  return (
    <tr className={valueErr || providerErr || networkErr || rowErr ? "row-invalid" : undefined}>
      <td>
        <select
          aria-label={`Exception ${n}: applies to`}
          value={kind}
          disabled={!editable}
          onChange={(e) => {
            const { domain: _d, tld: _t, ...rest } = ex;
            onChange(e.target.value === "tld" ? { ...rest, tld: value } : { ...rest, domain: value });
          }}
        >
          <option value="domain">Domain</option>
          <option value="tld">TLD</option>
        </select>
      </td>
      <td>
        <input
          aria-label={`Exception ${n}: ${kind === "tld" ? "top-level label" : "domain name"}`}
          aria-invalid={Boolean(valueErr)}
          aria-describedby={valueErr ? `ex-${index}-value-err` : undefined}
          value={value}
          placeholder={kind === "tld" ? "wallet" : "alice.wallet"}
          readOnly={!editable}
          onChange={(e) =>
            onChange(kind === "tld" ? { ...ex, tld: e.target.value } : { ...ex, domain: e.target.value })
          }
        />
        {valueErr && (
          <div className="field-error" id={`ex-${index}-value-err`} role="alert">
            {valueErr}
          </div>
        )}
        {rowErr && (
          <div className="field-error" role="alert">
            {rowErr}
          </div>
        )}
      </td>
      <td>
        <select
          aria-label={`Exception ${n}: preferred namespace`}
          aria-invalid={Boolean(providerErr)}
          value={ex.provider}
          disabled={!editable}
          onChange={(e) => {
            const provider = e.target.value as Provider;
            const keep =
              ex.network && (PROVIDERS[provider].networks as readonly string[]).includes(ex.network);
            onChange({ ...ex, provider, network: keep ? ex.network : undefined });
          }}
        >
          {PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon).map((p) => (
            <option key={p} value={p}>
              {providerLabel(p)}
            </option>
          ))}
        </select>
        {providerErr && (
          <div className="field-error" role="alert">
            {providerErr}
          </div>
        )}
      </td>
      <td>
        <select
          aria-label={`Exception ${n}: network`}
          aria-invalid={Boolean(networkErr)}
          value={ex.network ?? ""}
          disabled={!editable}
          onChange={(e) => onChange({ ...ex, network: (e.target.value || undefined) as Network | undefined })}
        >
          <option value="">Any network</option>
          {networks.map((nw) => (
            <option key={nw} value={nw}>
              {networkLabel(nw)}
            </option>
          ))}
        </select>
        {networkErr && (
          <div className="field-error" role="alert">
            {networkErr}
          </div>
        )}
      </td>
      <td className="actions">
        {editable && <RowAction label="Remove" target={`exception ${n}`} danger onClick={onRemove} />}
      </td>
    </tr>
  );
}
