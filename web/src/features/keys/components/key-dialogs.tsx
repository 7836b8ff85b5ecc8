import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { del, patch, post } from "../../../api";
import type { ApiKeyItem, CreatedKey, RotatedKey } from "../../../types";
import { ConfirmDialog, Dialog, ErrorMessage, Field, FormActions, formatDateTime } from "../../../ui";
import { fieldOf, type LimitsDraft, limitsBody, toIso, toLocal } from "../api/keys.api";
import { KeyLimitsFields } from "./key-limits-fields";

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

/** The secret of a created or rotated key, shown once. */
export function SecretDialog({
  created,
  onClose,
}: {
  created: CreatedKey | RotatedKey | null;
  onClose: () => void;
}) {
  const previous = created && "previous" in created ? created.previous : null;
  return (
    <Dialog open={created !== null} title="Your new API key" onClose={onClose}>
      {created && (
        <>
          <p className="alert alert-warning" role="alert">
            Copy this key now: you will not see it again. Store it in your secret manager.
          </p>
          <div className="secret">
            <code data-testid="new-key">{created.key}</code>
            <CopyButton text={created.key} />
          </div>
          {previous && (
            <p data-testid="overlap">
              The key it replaces (<code>{previous.prefix}…</code>) keeps working until{" "}
              {formatDateTime(previous.expiresAt)}.
            </p>
          )}
          <p className="muted small">
            Use it as <code>api-key: {created.prefix}…</code> on requests to <code>/svc/api/v1</code>.
          </p>
          <div className="form-actions">
            <button type="button" className="btn btn-primary" onClick={onClose}>
              I have stored it
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}

/** Changes a key's limits and expiry (every API instance applies them within a second). */
export function LimitsDialog({
  projectId,
  editing,
  onClose,
  onSaved,
}: {
  projectId: number;
  editing: ApiKeyItem | null;
  onClose: () => void;
  onSaved: () => void;
}) {
  const [draft, setDraft] = useState<LimitsDraft | null>(null);
  const d: LimitsDraft = draft ?? {
    endpoints: editing?.endpoints ?? [],
    networks: editing?.networks ?? [],
    providers: editing?.providers ?? [],
    expires: toLocal(editing?.expiresAt ?? null),
  };
  const rotated = editing?.rotatedTo != null;
  const save = useMutation({
    mutationFn: () => {
      const { expiresAt, ...scopes } = limitsBody(d);
      return patch(`/projects/${projectId}/keys/${editing?.id}`, rotated ? scopes : { ...scopes, expiresAt });
    },
    onSuccess: () => {
      setDraft(null);
      onSaved();
    },
  });
  const close = () => {
    setDraft(null);
    save.reset();
    onClose();
  };
  const field = fieldOf(save.error);
  return (
    <Dialog
      open={editing !== null}
      title={`Limits of ${editing?.name || editing?.prefix || ""}`}
      onClose={close}
    >
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <KeyLimitsFields
          draft={d}
          onChange={(next) => {
            setDraft(next);
            save.reset();
          }}
          errorField={field}
          error={save.error instanceof Error ? save.error.message : null}
          showExpiry={!rotated}
        />
        {save.error && !field && <ErrorMessage error={save.error} />}
        <FormActions action="Save limits" disabled={save.isPending} onCancel={close} />
      </form>
    </Dialog>
  );
}

/** Rotation: a new key with the same limits; the old one works until the chosen time (≤ 30 days). */
export function RotateDialog({
  projectId,
  rotating,
  onClose,
  onRotated,
}: {
  projectId: number;
  rotating: ApiKeyItem | null;
  onClose: () => void;
  onRotated: (k: RotatedKey) => void;
}) {
  const [until, setUntil] = useState<string | null>(null);
  // The replacement keeps the old key's expiry unless changed here ("" : never).
  const [expires, setExpires] = useState<string | null>(null);
  const value = until ?? toLocal(new Date().toISOString(), 86_400_000);
  const expiresValue = expires ?? toLocal(rotating?.expiresAt ?? null);
  const rotate = useMutation({
    mutationFn: () =>
      post<RotatedKey>(`/projects/${projectId}/keys/${rotating?.id}/rotate`, {
        overlapUntil: toIso(value),
        expiresAt: toIso(expiresValue),
      }),
    onSuccess: (k) => {
      setUntil(null);
      setExpires(null);
      onRotated(k);
    },
  });
  const close = () => {
    setUntil(null);
    setExpires(null);
    rotate.reset();
    onClose();
  };
  const field = fieldOf(rotate.error);
  return (
    <Dialog
      open={rotating !== null}
      title={`Rotate ${rotating?.name || rotating?.prefix || ""}?`}
      onClose={close}
    >
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          rotate.mutate();
        }}
      >
        <p>A new key with the same limits is created. Deploy it, then let the old one run out.</p>
        <Field
          label="Old key works until"
          hint="At most 30 days from now."
          error={field === "overlapUntil" && rotate.error instanceof Error ? rotate.error.message : null}
        >
          {(p) => (
            <input
              {...p}
              type="datetime-local"
              required
              value={value}
              onChange={(e) => {
                setUntil(e.target.value);
                rotate.reset();
              }}
            />
          )}
        </Field>
        <Field
          label="New key expires (optional)"
          hint={
            rotating?.expiresAt
              ? "The old key's expiry, kept unless you change it. Empty: never."
              : "Empty: never."
          }
          error={field === "expiresAt" && rotate.error instanceof Error ? rotate.error.message : null}
        >
          {(p) => (
            <input
              {...p}
              type="datetime-local"
              value={expiresValue}
              onChange={(e) => {
                setExpires(e.target.value);
                rotate.reset();
              }}
            />
          )}
        </Field>
        {rotate.error && field !== "overlapUntil" && field !== "expiresAt" && (
          <ErrorMessage error={rotate.error} />
        )}
        <FormActions action="Rotate key" disabled={rotate.isPending} onCancel={close} />
      </form>
    </Dialog>
  );
}

export function RevokeDialog({
  projectId,
  revoking,
  onClose,
  onRevoked,
}: {
  projectId: number;
  revoking: ApiKeyItem | null;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const revoke = useMutation({
    mutationFn: (k: ApiKeyItem) => del(`/projects/${projectId}/keys/${k.id}`),
    onSuccess: onRevoked,
  });
  return (
    <ConfirmDialog
      item={revoking}
      title={`Revoke ${revoking?.name || revoking?.prefix || ""}?`}
      confirm="Revoke key"
      error={revoke.error}
      pending={revoke.isPending}
      onCancel={onClose}
      onConfirm={(k) => revoke.mutate(k)}
    >
      <p>Requests with this key are refused from now on. This cannot be undone.</p>
    </ConfirmDialog>
  );
}
