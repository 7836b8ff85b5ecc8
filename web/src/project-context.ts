import { useOutletContext } from "react-router";
import type { Permission } from "@omniname/wire/permissions";
import type { ProjectDetail } from "./types";

/** What every page inside a project gets from the project layout (features/projects). */
export interface ProjectContext {
  project: ProjectDetail;
  /** Whether the signed-in member's role holds a permission (docs/permissions.md). */
  can: (p: Permission) => boolean;
  base: string;
}

export function useProject(): ProjectContext {
  return useOutletContext<ProjectContext>();
}

export const projectKey = (id: string | number) => ["project", Number(id)] as const;
