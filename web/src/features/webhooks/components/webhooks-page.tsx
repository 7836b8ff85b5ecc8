import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { del, patch, post } from "../../../api";
import { useProject } from "../../../project-context";
import {
  Badge,
  Card,
  ConfirmDialog,
  DataTable,
  Dialog,
  Empty,
  ErrorMessage,
  formatDateTime,
  Notice,
  PageHeader,
  QueryState,
  RowAction,
} from "../../../ui";
import {
  bodyOf,
  draftOf,
  EMPTY_DRAFT,
  hooksKey,
  isoOf,
  type TestResult,
  useWebhooks,
  type Webhook,
  type WebhookDraft,
} from "../api/webhooks.api";
import { DeliveryLog, TestOutcome } from "./delivery-log";
import { WebhookForm } from "./webhook-form";

function Status({ hook }: { hook: Webhook }) {
  if (!hook.enabled)
    return <Badge tone="danger">{hook.disabledReason ? "disabled: failing" : "disabled"}</Badge>;
  if (hook.failingSince !== null)
    return <Badge tone="soon">failing since {formatDateTime(isoOf(hook.failingSince))}</Badge>;
  return <Badge tone="success">enabled</Badge>;
}

/** The project's webhooks: create (the secret shown once), edit, disable, delete, test, delivery log. */
export function WebhooksPage() {
  const { project, can } = useProject();
  const client = useQueryClient();
  const allowed = can("webhooks.read");
  const editable = can("webhooks.write");
  const q = useWebhooks(project.id, allowed);
  const [formKey, setFormKey] = useState(0);
  const [secret, setSecret] = useState<string | null>(null);
  const [editing, setEditing] = useState<Webhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [tested, setTested] = useState<TestResult | null>(null);
  const refresh = () => client.invalidateQueries({ queryKey: hooksKey(project.id) });
  const base = `/projects/${project.id}/webhooks`;
  const create = useMutation({
    mutationFn: (d: WebhookDraft) => post<{ webhook: Webhook; secret: string }>(base, bodyOf(d)),
    onSuccess: (r) => {
      setSecret(r.secret);
      setSelected(r.webhook.id);
      setFormKey((k) => k + 1);
      refresh();
    },
  });
  const update = useMutation({
    mutationFn: ({ id, body }: { id: number; body: Record<string, unknown> }) =>
      patch<Webhook>(`${base}/${id}`, body),
    onSuccess: () => {
      setEditing(null);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (h: Webhook) => del(`${base}/${h.id}`),
    onSuccess: (_r, h) => {
      setDeleting(null);
      if (selected === h.id) setSelected(null);
      refresh();
    },
  });
  const test = useMutation({
    mutationFn: (h: Webhook) => post<TestResult>(`${base}/${h.id}/test`),
    onSuccess: (r, h) => {
      setTested(r);
      setSelected(h.id);
      client.invalidateQueries({ queryKey: ["webhook-deliveries", project.id, h.id] });
    },
  });
  if (!allowed)
    return (
      <div>
        <PageHeader title="Webhooks" />
        <Notice tone="warning">Only the project's owners and admins manage its webhooks.</Notice>
      </div>
    );
  const shown = q.data?.find((h) => h.id === selected) ?? null;
  return (
    <div>
      <PageHeader
        title="Webhooks"
        subtitle="Changes of the map POSTed to your endpoint as they happen, signed per Standard Webhooks, retried for up to a day."
      />
      {editable && (
        <Card title="Add a webhook">
          <WebhookForm
            key={formKey}
            initial={EMPTY_DRAFT}
            submitLabel="Create webhook"
            pending={create.isPending}
            error={create.error}
            onSubmit={(d) => create.mutate(d)}
          />
        </Card>
      )}
      <QueryState
        query={q}
        loading="Loading webhooks"
        empty={<Empty title="No webhooks yet">Add an endpoint above to hear of every change.</Empty>}
      >
        {(hooks) => (
          <Card title="Endpoints" className="card-flush">
            <DataTable label="Your webhooks" columns={["URL", "Event types", "Status", null]}>
              {hooks.map((h) => (
                <tr key={h.id} className={h.enabled ? undefined : "row-muted"}>
                  <td>
                    <code>{h.url}</code>
                    {h.description && <div className="muted small">{h.description}</div>}
                  </td>
                  <td>{h.eventTypes.length === 0 ? "all" : h.eventTypes.join(", ")}</td>
                  <td>
                    <Status hook={h} />
                  </td>
                  <td className="actions">
                    <RowAction label="Deliveries" target={`of ${h.url}`} onClick={() => setSelected(h.id)} />
                    {editable && (
                      <>
                        <RowAction
                          label="Send a test event"
                          target={`to ${h.url}`}
                          disabled={test.isPending}
                          onClick={() => test.mutate(h)}
                        />
                        <RowAction label="Edit" target={h.url} onClick={() => setEditing(h)} />
                        <RowAction
                          label={h.enabled ? "Disable" : "Enable"}
                          target={h.url}
                          onClick={() => update.mutate({ id: h.id, body: { enabled: !h.enabled } })}
                        />
                        <RowAction label="Delete" target={h.url} danger onClick={() => setDeleting(h)} />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          </Card>
        )}
      </QueryState>
      <ErrorMessage error={test.error ?? (editing ? null : update.error)} />
      {tested && <TestOutcome result={tested} />}
      {shown && <DeliveryLog projectId={project.id} hook={shown} />}
      <Dialog open={secret !== null} title="Your webhook's signing secret" onClose={() => setSecret(null)}>
        {secret && (
          <>
            <p className="alert alert-warning" role="alert">
              Copy this secret now: you will not see it again. Your receiver verifies each delivery with it.
            </p>
            <div className="secret">
              <code data-testid="webhook-secret">{secret}</code>
            </div>
            <div className="form-actions">
              <button type="button" className="btn btn-primary" onClick={() => setSecret(null)}>
                I have stored it
              </button>
            </div>
          </>
        )}
      </Dialog>
      <Dialog open={editing !== null} title="Edit the webhook" onClose={() => setEditing(null)}>
        {editing && (
          <WebhookForm
            initial={draftOf(editing)}
            submitLabel="Save"
            pending={update.isPending}
            error={update.error}
            onCancel={() => setEditing(null)}
            onSubmit={(d) => update.mutate({ id: editing.id, body: bodyOf(d) })}
          />
        )}
      </Dialog>
      <ConfirmDialog
        item={deleting}
        title="Delete this webhook?"
        confirm="Delete webhook"
        error={remove.error}
        pending={remove.isPending}
        onCancel={() => setDeleting(null)}
        onConfirm={(h) => remove.mutate(h)}
      >
        <p>
          <code>{deleting?.url}</code> gets nothing more; its queue and delivery log are deleted. This cannot
          be undone.
        </p>
      </ConfirmDialog>
    </div>
  );
}
