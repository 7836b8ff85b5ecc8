import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { type UseFormReturn, useForm } from "react-hook-form";
import { Link, useNavigate } from "react-router";
import { can } from "@omniname/wire/permissions";
import { ApiError, del, get, post } from "../../../api";
import type { ProjectAllowance, ProjectListItem } from "../../../types";
import {
  Badge,
  DataTable,
  Dialog,
  Empty,
  ErrorMessage,
  Field,
  FormActions,
  formatDate,
  PageHeader,
  QueryState,
  RowAction,
} from "../../../ui";

export const PROJECTS_KEY = ["projects"] as const;

export interface ProjectDetailsValues {
  name: string;
  description: string;
}

/** The server's refusal of a project's name (taken, or not valid), shown under the name field. */
export function nameErrorOf(err: unknown): string | null {
  return err instanceof ApiError && (err.code === "CONFLICT" || err.code === "INVALID_PARAMETER")
    ? err.message
    : null;
}

/** A project's name and description fields, with the server's limits (creating and editing). */
export function ProjectDetailsFields({
  form,
  nameError,
  nameHint,
}: {
  form: UseFormReturn<ProjectDetailsValues>;
  nameError: string | null;
  nameHint?: string;
}) {
  return (
    <>
      <Field label="Project name" error={form.formState.errors.name?.message ?? nameError} hint={nameHint}>
        {(p) => (
          <input
            {...p}
            {...form.register("name", {
              validate: (v) => v.trim() !== "" || "Give the project a name.",
              maxLength: { value: 100, message: "At most 100 characters." },
            })}
          />
        )}
      </Field>
      <Field label="Description (optional)" error={form.formState.errors.description?.message}>
        {(p) => (
          <textarea
            {...p}
            rows={3}
            {...form.register("description", {
              maxLength: { value: 1000, message: "At most 1,000 characters." },
            })}
          />
        )}
      </Field>
    </>
  );
}

function CreateProject({ onDone, limitText }: { onDone: () => void; limitText: string | null }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const form = useForm<ProjectDetailsValues>({
    defaultValues: { name: "", description: "" },
  });
  const create = useMutation({
    mutationFn: (v: ProjectDetailsValues) => post<ProjectListItem>("/projects", v),
    onSuccess: (p) => {
      client.invalidateQueries({ queryKey: PROJECTS_KEY });
      onDone();
      navigate(`/projects/${p.id}`);
    },
  });
  const err = create.error;
  const nameErr = nameErrorOf(err);
  return (
    <form className="form" noValidate onSubmit={form.handleSubmit((v) => create.mutate(v))}>
      <ProjectDetailsFields
        form={form}
        nameError={nameErr}
        nameHint="Unique across omniname, e.g. your app's name."
      />
      {limitText && <p className="muted small">{limitText}</p>}
      {err && !nameErr && <ErrorMessage error={err} />}
      <FormActions
        action={create.isPending ? "Creating…" : "Create project"}
        disabled={create.isPending}
        onCancel={onDone}
      />
    </form>
  );
}

export function DeleteProject({
  project,
  onClose,
}: {
  project: { id: number; name: string };
  onClose: () => void;
}) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const [typed, setTyped] = useState("");
  const remove = useMutation({
    mutationFn: () => del(`/projects/${project.id}`),
    onSuccess: () => {
      client.invalidateQueries({ queryKey: PROJECTS_KEY });
      onClose();
      navigate("/projects");
    },
  });
  return (
    <Dialog open title={`Delete ${project.name}?`} onClose={onClose}>
      <p>
        This deletes the project, its API keys (they stop working at once), its team, allowlists and usage
        history. It cannot be undone.
      </p>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed === project.name) remove.mutate();
        }}
      >
        <Field label={`Type the project's name, ${project.name}, to confirm`}>
          {(p) => (
            <input {...p} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
          )}
        </Field>
        <ErrorMessage error={remove.error} />
        <FormActions
          action="Delete project"
          danger
          disabled={typed !== project.name || remove.isPending}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}

export function ProjectsPage() {
  const list = useQuery({ queryKey: PROJECTS_KEY, queryFn: () => get<ProjectListItem[]>("/projects") });
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<ProjectListItem | null>(null);
  // How many projects the account owns and may own (the most generous of its plans and the
  // default plan): shown before the limit bites, from the first visit on.
  const allowance = useQuery({
    queryKey: [...PROJECTS_KEY, "allowance"],
    queryFn: () => get<ProjectAllowance>("/projects/allowance"),
  });
  const owned = allowance.data?.owned ?? 0;
  const max = allowance.data?.max ?? null;
  const atLimit = max !== null && owned >= max;
  const limitText = max !== null ? `You own ${owned} of the ${max} projects your plan allows.` : null;
  return (
    <div>
      <PageHeader
        title="Projects"
        subtitle="Each project has its own API keys, resolution settings, team and usage."
        actions={
          <button
            type="button"
            className="btn btn-primary"
            disabled={atLimit || list.isPending}
            onClick={() => setCreating(true)}
          >
            New project
          </button>
        }
      />
      {limitText && (
        <p className={`limit-note ${atLimit ? "is-full" : ""}`} role={atLimit ? "alert" : undefined}>
          {atLimit
            ? `You own ${owned} of ${max} projects: your plan's limit. Delete one or ask us for a larger plan.`
            : limitText}
        </p>
      )}
      <QueryState
        query={list}
        loading="Loading your projects"
        empty={
          <Empty title="No projects yet">
            <p>Create your first project to get an API key and start resolving names.</p>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              Create a project
            </button>
          </Empty>
        }
      >
        {(projects) => (
          <DataTable
            label="Your projects"
            wrapClassName="card card-flush"
            columns={["Name", "Plan", "Created", "Your role", null]}
          >
            {projects.map((p) => (
              <tr key={p.id}>
                <td>
                  <Link to={`/projects/${p.id}`} className="strong-link">
                    {p.name}
                  </Link>
                  {p.description && <div className="muted small">{p.description}</div>}
                </td>
                <td>
                  <Badge tone="plan">{p.plan}</Badge>
                </td>
                <td>{formatDate(p.createdAt)}</td>
                <td>
                  <Badge tone={p.role}>{p.role}</Badge>
                </td>
                <td className="actions">
                  {can(p.role, "project.delete") && (
                    <RowAction label="Delete" target={p.name} danger onClick={() => setDeleting(p)} />
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryState>
      <Dialog open={creating} title="New project" onClose={() => setCreating(false)}>
        {creating && <CreateProject onDone={() => setCreating(false)} limitText={limitText} />}
      </Dialog>
      {deleting && <DeleteProject project={deleting} onClose={() => setDeleting(null)} />}
    </div>
  );
}
