import { useQuery } from "@tanstack/react-query";
import { Suspense } from "react";
import { Link, NavLink, Outlet, useParams } from "react-router";
import { can as canRole, type Permission } from "@omniname/wire/permissions";
import { ApiError, get } from "../../../api";
import type { ProjectDetail } from "../../../types";
import { type ProjectContext, projectKey } from "../../../project-context";
import { Badge, ErrorMessage, Loading, Notice, PageTitle } from "../../../ui";

const TABS: Array<{ to: string; label: string; end?: boolean; permission?: Permission }> = [
  { to: "", label: "Overview", end: true },
  { to: "resolution", label: "Resolution" },
  { to: "collisions", label: "Collisions" },
  { to: "try", label: "Try it" },
  { to: "keys", label: "API keys" },
  { to: "team", label: "Team" },
  { to: "security", label: "Security" },
  { to: "webhooks", label: "Webhooks", permission: "webhooks.read" },
  { to: "audit", label: "Audit log", permission: "audit.read" },
];

export function ProjectLayout() {
  const { projectId = "" } = useParams();
  const q = useQuery({
    queryKey: projectKey(projectId),
    queryFn: () => get<ProjectDetail>(`/projects/${projectId}`),
  });
  if (q.isPending) return <Loading label="Loading the project" />;
  if (q.error instanceof ApiError && q.error.code === "TWO_FACTOR_REQUIRED")
    return (
      <div className="narrow">
        <PageTitle>Two-factor sign-in required</PageTitle>
        <Notice tone="warning">
          This project requires two-factor sign-in of every member. Turn it on for your account to open it.
        </Notice>
        <Link
          className="btn btn-primary"
          to={`/account/two-factor?next=${encodeURIComponent(`/projects/${projectId}`)}`}
        >
          Set up two-factor sign-in
        </Link>
      </div>
    );
  if (q.isError)
    return (
      <div className="narrow">
        <PageTitle>Project unavailable</PageTitle>
        <ErrorMessage error={q.error} retry={() => q.refetch()} />
      </div>
    );
  const project = q.data;
  const base = `/projects/${project.id}`;
  const ctx: ProjectContext = { project, can: (p) => canRole(project.role, p), base };
  return (
    <div className="project">
      <div className="project-head">
        <div>
          <p className="crumb">
            <Link to="/projects">Projects</Link> <span aria-hidden="true">/</span>
          </p>
          <p className="project-name">{project.name}</p>
        </div>
        <div className="project-meta">
          <Badge tone="plan">{project.limits.name} plan</Badge>
          <Badge tone={project.role}>{project.role}</Badge>
        </div>
      </div>
      {project.role === "viewer" && (
        <p className="viewer-note" role="note">
          You are a viewer in this project: you can see everything, and change nothing.
        </p>
      )}
      <nav className="tabs" aria-label="Project sections">
        {TABS.filter((t) => !t.permission || ctx.can(t.permission)).map((t) => (
          <NavLink key={t.to} to={t.to === "" ? base : `${base}/${t.to}`} end={t.end} className="tab">
            {t.label}
          </NavLink>
        ))}
      </nav>
      <div className="project-body">
        <Suspense fallback={<Loading />}>
          <Outlet context={ctx} />
        </Suspense>
      </div>
    </div>
  );
}
