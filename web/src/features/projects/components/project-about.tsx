import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { Link, useNavigate } from "react-router";
import { get, patch, post } from "../../../api";
import type { MembersAnswer, ProjectListItem } from "../../../types";
import { Card, Dialog, ErrorMessage, FormActions, Notice } from "../../../ui";
import { projectKey, useProject } from "../../../project-context";
import { nameErrorOf, PROJECTS_KEY, ProjectDetailsFields, type ProjectDetailsValues } from "./projects-page";

/**
 * The project's name and description, editable by owners and admins (`project.update`), and
 * "Leave this project" for every member but the last owner, who is told how to leave instead.
 * On the Overview page, below the usage.
 */
export function ProjectAbout() {
  const { project, can } = useProject();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [leaving, setLeaving] = useState(false);
  const [saved, setSaved] = useState(false);
  const current: ProjectDetailsValues = { name: project.name, description: project.description };
  const form = useForm<ProjectDetailsValues>({ defaultValues: current });
  const update = useMutation({
    mutationFn: (v: ProjectDetailsValues) => {
      // Only what changed: an unchanged name is not sent (and not checked for uniqueness again).
      const body: Partial<ProjectDetailsValues> = {};
      if (v.name.trim() !== project.name) body.name = v.name.trim();
      if (v.description !== project.description) body.description = v.description;
      return Object.keys(body).length === 0
        ? Promise.resolve(null)
        : patch<ProjectListItem>(`/projects/${project.id}`, body);
    },
    onSuccess: () => {
      client.invalidateQueries({ queryKey: projectKey(project.id) });
      client.invalidateQueries({ queryKey: PROJECTS_KEY });
      setEditing(false);
      setSaved(true);
    },
  });
  const leave = useMutation({
    mutationFn: () => post(`/projects/${project.id}/leave`),
    onSuccess: () => {
      client.invalidateQueries({ queryKey: PROJECTS_KEY });
      client.removeQueries({ queryKey: projectKey(project.id) });
      navigate("/projects");
    },
  });
  const err = update.error;
  const nameErr = nameErrorOf(err);
  // The last owner is not offered "Leave" (the API would refuse it): the team tells who owns it.
  const team = useQuery({
    queryKey: ["members", project.id],
    queryFn: () => get<MembersAnswer>(`/projects/${project.id}/members`),
    enabled: project.role === "owner",
  });
  const lastOwner =
    project.role === "owner" &&
    team.data !== undefined &&
    team.data.members.filter((m) => m.role === "owner").length <= 1;

  return (
    <Card title="About this project">
      {saved && !editing && <Notice tone="success">The project's details are saved.</Notice>}
      {editing ? (
        <form className="form" noValidate onSubmit={form.handleSubmit((v) => update.mutate(v))}>
          <ProjectDetailsFields form={form} nameError={nameErr} />
          {err && !nameErr && <ErrorMessage error={err} />}
          <FormActions
            action={update.isPending ? "Saving…" : "Save details"}
            disabled={update.isPending}
            onCancel={() => {
              form.reset(current);
              update.reset();
              setEditing(false);
            }}
          />
        </form>
      ) : (
        <dl className="details">
          <dt>Name</dt>
          <dd>{project.name}</dd>
          <dt>Description</dt>
          <dd>{project.description || <span className="muted">None</span>}</dd>
        </dl>
      )}
      <div className="form-actions">
        {can("project.update") && !editing && (
          <button
            type="button"
            className="btn btn-secondary"
            onClick={() => {
              form.reset(current);
              setSaved(false);
              setEditing(true);
            }}
          >
            Edit details
          </button>
        )}
        {!lastOwner && (
          <button type="button" className="btn btn-ghost-danger" onClick={() => setLeaving(true)}>
            Leave this project
          </button>
        )}
      </div>
      {lastOwner && (
        <p className="muted small" data-testid="last-owner">
          You are this project's only owner, so you cannot leave it: make another member an owner on the{" "}
          <Link className="text-link" to={`/projects/${project.id}/team`}>
            Team
          </Link>{" "}
          page first, or delete the project.
        </p>
      )}
      <Dialog open={leaving} title={`Leave ${project.name}?`} onClose={() => setLeaving(false)}>
        <p>
          You lose access to this project at once; a member who manages the team can invite you again. A
          project's last owner cannot leave it: make someone else an owner first, or delete the project.
        </p>
        <ErrorMessage error={leave.error} />
        <FormActions
          action="Leave project"
          danger
          disabled={leave.isPending}
          cancel="Stay"
          onCancel={() => setLeaving(false)}
          onAction={() => leave.mutate()}
        />
      </Dialog>
    </Card>
  );
}
