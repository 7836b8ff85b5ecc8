import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { canManageRole, ROLES } from "@omniname/wire/permissions";
import { ApiError, del, get, patch, post } from "../../../api";
import { useSession } from "../../../session";
import type { Member, MemberAddedAnswer, MembersAnswer, Role } from "../../../types";
import {
  Badge,
  Card,
  ConfirmDialog,
  Dialog,
  Empty,
  ErrorMessage,
  Field,
  formatDate,
  Loading,
  Notice,
  PageHeader,
  TableWrap,
} from "../../../ui";
import { useProject } from "../../../project-context";

const ROLE_HELP: Record<Role, string> = {
  owner: "everything, including deleting the project",
  admin: "team, security and settings",
  developer: "API keys and resolution settings",
  viewer: "read-only",
};
const ROLE_ARTICLE: Record<Role, string> = { owner: "an", admin: "an", developer: "a", viewer: "a" };

export function TeamPage() {
  const { project, can } = useProject();
  const { account } = useSession();
  const client = useQueryClient();
  const key = ["members", project.id];
  // Invitations are accepted elsewhere (by e-mail): refresh when the person comes back to the tab.
  const q = useQuery({
    queryKey: key,
    queryFn: () => get<MembersAnswer>(`/projects/${project.id}/members`),
    refetchOnWindowFocus: true,
  });
  const refresh = () => {
    client.invalidateQueries({ queryKey: key });
    client.invalidateQueries({ queryKey: ["project", project.id] });
  };
  const editable = can("members.write");
  const myRole = project.role;
  const form = useForm<{ email: string; role: Role }>({ defaultValues: { email: "", role: "developer" } });
  const invite = useMutation({
    mutationFn: (v: { email: string; role: Role }) =>
      post<MemberAddedAnswer>(`/projects/${project.id}/members`, v),
    onSuccess: () => {
      form.reset({ email: "", role: form.getValues("role") });
      refresh();
    },
  });
  /** A role change waiting for its confirmation; the last one saved, for the notice. */
  const [changing, setChanging] = useState<{ member: Member; role: Role } | null>(null);
  const setRole = useMutation({
    mutationFn: (v: { member: Member; role: Role }) =>
      patch(`/projects/${project.id}/members/${v.member.accountId}`, { role: v.role }),
    onSuccess: () => {
      setChanging(null);
      refresh();
    },
  });
  const [removing, setRemoving] = useState<Member | null>(null);
  const remove = useMutation({
    mutationFn: (m: Member) => del(`/projects/${project.id}/members/${m.accountId}`),
    onSuccess: () => {
      setRemoving(null);
      refresh();
    },
  });
  const cancel = useMutation({
    mutationFn: (id: number) => del(`/projects/${project.id}/invitations/${id}`),
    onSuccess: refresh,
  });
  const inviteErr = invite.error;
  const emailErr =
    inviteErr instanceof ApiError && ["CONFLICT", "INVALID_PARAMETER"].includes(inviteErr.code)
      ? inviteErr.message
      : null;
  const total = (q.data?.members.length ?? 0) + (q.data?.invitations.length ?? 0);
  const assignable = ROLES.filter((r) => canManageRole(myRole, r));
  return (
    <div>
      <PageHeader
        title="Team"
        subtitle={`Members and pending invitations: ${total} of ${project.limits.maxMembers} your plan allows.`}
      />
      {editable && (
        <Card title="Invite someone">
          <form className="form form-row" noValidate onSubmit={form.handleSubmit((v) => invite.mutate(v))}>
            <Field label="E-mail address" error={form.formState.errors.email?.message ?? emailErr}>
              {(p) => (
                <input
                  {...p}
                  type="email"
                  autoComplete="off"
                  {...form.register("email", { required: "Enter an e-mail address." })}
                />
              )}
            </Field>
            <Field label="Role">
              {(p) => (
                <select {...p} {...form.register("role")}>
                  {assignable.map((r) => (
                    <option key={r} value={r}>
                      {r} ({ROLE_HELP[r]})
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <button
              type="submit"
              className="btn btn-primary"
              disabled={invite.isPending || total >= project.limits.maxMembers}
            >
              Send invitation
            </button>
          </form>
          {inviteErr && !emailErr && <ErrorMessage error={inviteErr} />}
          {invite.data?.status === "member" && (
            <Notice tone="success">
              {invite.data.member.email} already had an account and is now a member.
            </Notice>
          )}
          {invite.data?.status === "invited" && (
            <Notice tone="success">Invitation sent to {invite.data.invitation.email}.</Notice>
          )}
        </Card>
      )}
      {q.isPending && <Loading label="Loading the team" />}
      {q.isError && <ErrorMessage error={q.error} retry={() => q.refetch()} />}
      <ErrorMessage error={cancel.error} />
      {setRole.isSuccess && (
        <Notice tone="success">
          {setRole.variables.member.fullName} is now {ROLE_ARTICLE[setRole.variables.role]}{" "}
          {setRole.variables.role}.
        </Notice>
      )}
      {q.data && (
        <>
          <Card title="Members" className="card-flush">
            <TableWrap label="Members table">
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">E-mail</th>
                    <th scope="col">Role</th>
                    <th scope="col">Member since</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {q.data.members.map((m) => {
                    const me = m.accountId === account?.id;
                    const manage = editable && !me && canManageRole(myRole, m.role);
                    return (
                      <tr key={m.accountId}>
                        <td>
                          {m.fullName} {me && <span className="muted">(you)</span>}
                        </td>
                        <td>{m.email}</td>
                        <td>
                          {manage ? (
                            <select
                              aria-label={`Role of ${m.fullName}`}
                              value={m.role}
                              disabled={setRole.isPending}
                              onChange={(e) => {
                                setRole.reset();
                                setChanging({ member: m, role: e.target.value as Role });
                              }}
                            >
                              {assignable.map((r) => (
                                <option key={r} value={r}>
                                  {r}
                                </option>
                              ))}
                            </select>
                          ) : (
                            <Badge tone={m.role}>{m.role}</Badge>
                          )}
                        </td>
                        <td className="when">{formatDate(m.since)}</td>
                        <td className="actions">
                          {manage && (
                            <button
                              type="button"
                              className="btn btn-small btn-ghost-danger"
                              onClick={() => setRemoving(m)}
                            >
                              Remove<span className="sr-only"> {m.fullName}</span>
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableWrap>
          </Card>
          <Card title="Pending invitations">
            {q.data.invitations.length === 0 ? (
              <Empty title="No pending invitations" />
            ) : (
              <TableWrap label="Pending invitations table">
                <table className="table">
                  <thead>
                    <tr>
                      <th scope="col">E-mail</th>
                      <th scope="col">Role</th>
                      <th scope="col">Expires</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {q.data.invitations.map((i) => (
                      <tr key={i.id}>
                        <td>{i.email}</td>
                        <td>
                          <Badge tone={i.role}>{i.role}</Badge>
                        </td>
                        <td className="when">{formatDate(i.expiresAt)}</td>
                        <td className="actions">
                          {editable && (
                            <button
                              type="button"
                              className="btn btn-small btn-ghost-danger"
                              onClick={() => cancel.mutate(i.id)}
                            >
                              Cancel<span className="sr-only"> the invitation of {i.email}</span>
                            </button>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
          </Card>
        </>
      )}
      <Dialog
        open={changing !== null}
        title={`Make ${changing?.member.fullName ?? ""} ${changing ? ROLE_ARTICLE[changing.role] : ""} ${changing?.role ?? ""}?`}
        // Closing after the save must keep its notice: the mutation is reset on the next change.
        onClose={() => setChanging(null)}
      >
        {changing && (
          <>
            <p>
              {changing.member.email} is {ROLE_ARTICLE[changing.member.role]} {changing.member.role} now;{" "}
              {changing.role === "owner"
                ? "an owner can do everything you can, including removing other owners and deleting the project."
                : `as ${ROLE_ARTICLE[changing.role]} ${changing.role}: ${ROLE_HELP[changing.role]}.`}
            </p>
            <ErrorMessage error={setRole.error} />
            <div className="form-actions">
              <button
                type="button"
                className="btn btn-secondary"
                onClick={() => {
                  setChanging(null);
                  setRole.reset();
                }}
              >
                Cancel
              </button>
              <button
                type="button"
                className="btn btn-primary"
                disabled={setRole.isPending}
                onClick={() => setRole.mutate(changing)}
              >
                Change role
              </button>
            </div>
          </>
        )}
      </Dialog>
      <ConfirmDialog
        item={removing}
        title={`Remove ${removing?.fullName ?? ""}?`}
        confirm="Remove"
        error={remove.error}
        pending={remove.isPending}
        onCancel={() => setRemoving(null)}
        onConfirm={(m) => remove.mutate(m)}
      >
        <p>{removing?.email} loses access to this project at once.</p>
      </ConfirmDialog>
    </div>
  );
}
