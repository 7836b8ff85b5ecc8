import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { del, get, post } from "../api";
import type { ApiKeyItem, CreatedKey } from "../types";
import {
  Badge,
  Card,
  ConfirmDialog,
  Dialog,
  Empty,
  ErrorMessage,
  Field,
  formatDate,
  formatDateTime,
  Loading,
  PageHeader,
  TableHead,
  TableWrap,
} from "../ui";
import { useProject } from "./project";

function CopyButton({ text }: { text: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className="btn btn-secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState("copied");
        } catch {
          setState("failed");
        }
      }}
    >
      <span aria-live="polite">
        {state === "copied" ? "Copied" : state === "failed" ? "Select and copy it" : "Copy"}
      </span>
    </button>
  );
}

export function KeysPage() {
  const { project, can } = useProject();
  const client = useQueryClient();
  const key = ["keys", project.id];
  const q = useQuery({ queryKey: key, queryFn: () => get<ApiKeyItem[]>(`/projects/${project.id}/keys`) });
  const editable = can("keys.write");
  const [name, setName] = useState("");
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyItem | null>(null);
  const refresh = () => {
    client.invalidateQueries({ queryKey: key });
    client.invalidateQueries({ queryKey: ["project", project.id] });
  };
  const create = useMutation({
    mutationFn: () => post<CreatedKey>(`/projects/${project.id}/keys`, { name: name.trim() }),
    onSuccess: (k) => {
      setCreated(k);
      setName("");
      refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (k: ApiKeyItem) => del(`/projects/${project.id}/keys/${k.id}`),
    onSuccess: () => {
      setRevoking(null);
      refresh();
    },
  });
  const active = q.data?.filter((k) => k.status === "active").length ?? 0;
  return (
    <div>
      <PageHeader
        title="API keys"
        subtitle={`Keys authenticate your servers with the api-key header. ${active} of ${project.limits.maxKeys} active keys your plan allows.`}
      />
      {editable && (
        <Card title="Create a key">
          <form
            className="form form-row"
            onSubmit={(e) => {
              e.preventDefault();
              create.mutate();
            }}
          >
            <Field label="Key name" hint="Where it is used, e.g. production backend.">
              {(p) => <input {...p} value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />}
            </Field>
            <button
              type="submit"
              className="btn btn-primary"
              disabled={create.isPending || active >= project.limits.maxKeys}
            >
              Create key
            </button>
          </form>
          <ErrorMessage error={create.error} />
        </Card>
      )}
      {q.isPending && <Loading label="Loading keys" />}
      {q.isError && <ErrorMessage error={q.error} retry={() => q.refetch()} />}
      {q.data && q.data.length === 0 && (
        <Empty title="No API keys yet">
          <p>
            {editable
              ? "Create a key above to call the API."
              : "An owner, admin or developer can create one."}
          </p>
        </Empty>
      )}
      {q.data && q.data.length > 0 && (
        <Card title="Keys" className="card-flush">
          <TableWrap label="Your API keys">
            <table className="table">
              <TableHead columns={["Name", "Key", "Created", "Last used", "Status", null]} />
              <tbody>
                {q.data.map((k) => (
                  <tr key={k.id} className={k.status === "revoked" ? "row-muted" : undefined}>
                    <td>{k.name || <span className="muted">unnamed</span>}</td>
                    <td>
                      <code>{k.prefix}…</code>
                    </td>
                    <td>{formatDate(k.createdAt)}</td>
                    <td>{formatDateTime(k.lastUsedAt)}</td>
                    <td>
                      {k.status === "active" ? (
                        <Badge tone="success">active</Badge>
                      ) : (
                        <Badge tone="danger">revoked {formatDate(k.revokedAt)}</Badge>
                      )}
                    </td>
                    <td className="actions">
                      {editable && k.status === "active" && (
                        <button
                          type="button"
                          className="btn btn-small btn-ghost-danger"
                          onClick={() => setRevoking(k)}
                        >
                          Revoke<span className="sr-only"> {k.name || k.prefix}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </Card>
      )}
      <Dialog open={created !== null} title="Your new API key" onClose={() => setCreated(null)}>
        {created && (
          <>
            <p className="alert alert-warning" role="alert">
              Copy this key now: you will not see it again. Store it in your secret manager.
            </p>
            <div className="secret">
              <code data-testid="new-key">{created.key}</code>
              <CopyButton text={created.key} />
            </div>
            <p className="muted small">
              Use it as <code>api-key: {created.prefix}…</code> on requests to <code>/svc/api/v1</code>.
            </p>
            <div className="form-actions">
              <button type="button" className="btn btn-primary" onClick={() => setCreated(null)}>
                I have stored it
              </button>
            </div>
          </>
        )}
      </Dialog>
      <ConfirmDialog
        item={revoking}
        title={`Revoke ${revoking?.name || revoking?.prefix || ""}?`}
        confirm="Revoke key"
        error={revoke.error}
        pending={revoke.isPending}
        onCancel={() => setRevoking(null)}
        onConfirm={(k) => revoke.mutate(k)}
      >
        <p>Requests with this key are refused from now on. This cannot be undone.</p>
      </ConfirmDialog>
    </div>
  );
}
