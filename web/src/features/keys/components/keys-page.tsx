import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { get, post } from "../../../api";
import { useProject } from "../../../project-context";
import type { ApiKeyItem, CreatedKey, RotatedKey } from "../../../types";
import {
  Badge,
  Card,
  DataTable,
  Empty,
  ErrorMessage,
  Field,
  formatDate,
  formatDateTime,
  nf,
  PageHeader,
  QueryState,
  RowAction,
} from "../../../ui";
import { fieldOf, type LimitsDraft, limitsBody, limitsSummary, NO_LIMITS } from "../api/keys.api";
import { LimitsDialog, RevokeDialog, RotateDialog, SecretDialog } from "./key-dialogs";
import { KeyLimitsFields } from "./key-limits-fields";

function StatusBadge({ k }: { k: ApiKeyItem }) {
  if (k.status === "revoked") return <Badge tone="danger">revoked</Badge>;
  // The date is in the "Expires" column: the badge stays one short word, so the table fits its card.
  if (k.status === "expired") return <Badge tone="danger">expired</Badge>;
  if (k.rotatedTo !== null) return <Badge tone="warning">rotated</Badge>;
  return <Badge tone="success">active</Badge>;
}

/** A key's row: its name, prefix, limits, dates, use and status, and (to an editor) its actions. */
function KeyRow({
  k,
  editable,
  onLimits,
  onRotate,
  onRevoke,
}: {
  k: ApiKeyItem;
  editable: boolean;
  onLimits: (k: ApiKeyItem) => void;
  onRotate: (k: ApiKeyItem) => void;
  onRevoke: (k: ApiKeyItem) => void;
}) {
  const name = k.name || k.prefix;
  return (
    <tr data-key-id={k.id} className={k.status === "active" ? undefined : "row-muted"}>
      <td className="key-name">{k.name || <span className="muted">unnamed</span>}</td>
      <td>
        <code>{k.prefix}…</code>
      </td>
      <td className="small">{limitsSummary(k)}</td>
      <td className="when">
        {k.expiresAt ? formatDateTime(k.expiresAt) : <span className="muted">never</span>}
        {k.rotatedTo !== null && k.status === "active" && (
          <div className="muted small">end of the overlap</div>
        )}
        {k.status === "revoked" && <div className="muted small">revoked {formatDate(k.revokedAt)}</div>}
      </td>
      <td className="when">{formatDateTime(k.lastUsedAt)}</td>
      <td className="num">{nf.format(k.requestsThisMonth)}</td>
      <td>
        <StatusBadge k={k} />
      </td>
      <td className="actions">
        {editable && k.status === "active" && (
          <>
            <RowAction label="Limits" target={`of ${name}`} onClick={() => onLimits(k)} />
            {k.rotatedTo === null && <RowAction label="Rotate" target={name} onClick={() => onRotate(k)} />}
            <RowAction label="Revoke" target={name} danger onClick={() => onRevoke(k)} />
          </>
        )}
      </td>
    </tr>
  );
}

export function KeysPage() {
  const { project, can } = useProject();
  const client = useQueryClient();
  const key = ["keys", project.id];
  const q = useQuery({ queryKey: key, queryFn: () => get<ApiKeyItem[]>(`/projects/${project.id}/keys`) });
  const editable = can("keys.write");
  const [name, setName] = useState("");
  /** The browser's own refusal of an empty name (the server would name the key "unnamed"). */
  const [nameError, setNameError] = useState<string | null>(null);
  const [limits, setLimits] = useState<LimitsDraft>(NO_LIMITS);
  const [created, setCreated] = useState<CreatedKey | RotatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyItem | null>(null);
  const [editing, setEditing] = useState<ApiKeyItem | null>(null);
  const [rotating, setRotating] = useState<ApiKeyItem | null>(null);
  const refresh = () => {
    client.invalidateQueries({ queryKey: key });
    client.invalidateQueries({ queryKey: ["project", project.id] });
  };
  const create = useMutation({
    mutationFn: () =>
      post<CreatedKey>(`/projects/${project.id}/keys`, { name: name.trim(), ...limitsBody(limits) }),
    onSuccess: (k) => {
      setCreated(k);
      setName("");
      setLimits(NO_LIMITS);
      refresh();
    },
  });
  const field = fieldOf(create.error);
  const active = q.data?.filter((k) => k.status === "active" && k.rotatedTo === null).length ?? 0;
  return (
    <div>
      <PageHeader
        title="API keys"
        subtitle={`Keys authenticate your servers with the api-key header. ${active} of ${project.limits.maxKeys} active keys your plan allows.`}
      />
      {editable && (
        <Card title="Create a key">
          <form
            className="form"
            onSubmit={(e) => {
              e.preventDefault();
              if (name.trim() === "") {
                setNameError("Enter a name for the key, e.g. production backend.");
                return;
              }
              setNameError(null);
              create.mutate();
            }}
            noValidate
          >
            <Field
              label="Key name"
              hint="Where it is used, e.g. production backend."
              error={
                nameError ?? (field === "name" && create.error instanceof Error ? create.error.message : null)
              }
            >
              {(p) => (
                <input
                  {...p}
                  value={name}
                  required
                  maxLength={100}
                  onChange={(e) => {
                    setName(e.target.value);
                    setNameError(null);
                    if (field === "name") create.reset();
                  }}
                />
              )}
            </Field>
            <details className="key-limits-details">
              <summary>Limits and expiry (optional)</summary>
              <KeyLimitsFields
                draft={limits}
                onChange={(d) => {
                  setLimits(d);
                  create.reset();
                }}
                errorField={field}
                error={create.error instanceof Error ? create.error.message : null}
              />
            </details>
            {create.error && !field && <ErrorMessage error={create.error} />}
            <div className="form-actions">
              <button
                type="submit"
                className="btn btn-primary"
                disabled={create.isPending || active >= project.limits.maxKeys}
              >
                Create key
              </button>
            </div>
          </form>
        </Card>
      )}
      <QueryState
        query={q}
        loading="Loading keys"
        empty={
          <Empty title="No API keys yet">
            <p>
              {editable
                ? "Create a key above to call the API."
                : "An owner, admin or developer can create one."}
            </p>
          </Empty>
        }
      >
        {(keys) => (
          <Card title="Keys" className="card-flush">
            <DataTable
              label="Your API keys"
              className="table-keys"
              columns={[
                "Name",
                "Key",
                "Limits",
                "Expires",
                "Last used",
                "Requests this month",
                "Status",
                null,
              ]}
            >
              {keys.map((k) => (
                <KeyRow
                  key={k.id}
                  k={k}
                  editable={editable}
                  onLimits={setEditing}
                  onRotate={setRotating}
                  onRevoke={setRevoking}
                />
              ))}
            </DataTable>
          </Card>
        )}
      </QueryState>
      <SecretDialog created={created} onClose={() => setCreated(null)} />
      <LimitsDialog
        projectId={project.id}
        editing={editing}
        onClose={() => setEditing(null)}
        onSaved={() => {
          setEditing(null);
          refresh();
        }}
      />
      <RotateDialog
        projectId={project.id}
        rotating={rotating}
        onClose={() => setRotating(null)}
        onRotated={(k) => {
          setRotating(null);
          setCreated(k);
          refresh();
        }}
      />
      <RevokeDialog
        projectId={project.id}
        revoking={revoking}
        onClose={() => setRevoking(null)}
        onRevoked={() => {
          setRevoking(null);
          refresh();
        }}
      />
    </div>
  );
}
