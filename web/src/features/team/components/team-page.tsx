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
  DataTable,
  Dialog,
  Empty,
  ErrorMessage,
  Field,
  FormActions,
  formatDate,
  Notice,
  PageHeader,
  QueryState,
  RowAction,
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
      <QueryState query={q} loading="Loading the team">
        {(team) => (
          <>
            <ErrorMessage error={cancel.error} />
            {setRole.isSuccess && (
              <Notice tone="success">
                {setRole.variables.member.fullName} is now {ROLE_ARTICLE[setRole.variables.role]}{" "}
                {setRole.variables.role}.
              </Notice>
            )}
            <Card title="Members" className="card-flush">
              <DataTable label="Members table" columns={["Name", "E-mail", "Role", "Member since", null]}>
                {team.members.map((m) => {
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
                          <RowAction
                            label="Remove"
                            target={m.fullName}
                            danger
                            onClick={() => setRemoving(m)}
                          />
                        )}
                      </td>
                    </tr>
                  );
                })}
              </DataTable>
            </Card>
            <Card title="Pending invitations">
              {team.invitations.length === 0 ? (
                <Empty title="No pending invitations" />
              ) : (
                <DataTable label="Pending invitations table" columns={["E-mail", "Role", "Expires", null]}>
                  {team.invitations.map((i) => (
                    <tr key={i.id}>
                      <td>{i.email}</td>
                      <td>
                        <Badge tone={i.role}>{i.role}</Badge>
                      </td>
                      <td className="when">{formatDate(i.expiresAt)}</td>
                      <td className="actions">
                        {editable && (
                          <RowAction
                            label="Cancel"
                            target={`the invitation of ${i.email}`}
                            danger
                            onClick={() => cancel.mutate(i.id)}
                          />
                        )}
                      </td>
                    </tr>
                  ))}
                </DataTable>
              )}
            </Card>
          </>
        )}
      </QueryState>
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
            <FormActions
              action="Change role"
              disabled={setRole.isPending}
              onCancel={() => {
                setChanging(null);
                setRole.reset();
              }}
              onAction={() => setRole.mutate(changing)}
            />
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
