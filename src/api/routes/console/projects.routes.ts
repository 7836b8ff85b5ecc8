import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import { consoleRouter, projectIdOf as pid } from "./console-route.js";
import {
  ok,
  ProjectCreateBody,
  ProjectParams,
  ProjectPatchBody,
  SecurityBody,
  SETTINGS_BODY_LIMIT,
  SettingsBody,
} from "./console.schemas.js";

/** Projects: list, create, describe, rename, delete; dashboard; settings; security. */
export function projectRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const { projects } = services;
  const route = consoleRouter(scope);
  const params = ProjectParams;

  route.get("/projects", {
    summary: "Projects of the signed-in account, with its role",
    access: "session",
    handler: async (request) => ok(await projects.list(request.session!.account.id)),
  });
  route.get("/projects/allowance", {
    summary: "How many projects the signed-in account owns, and how many its plans allow it to own",
    access: "session",
    handler: async (request) => ok(await projects.allowance(request.session!.account.id)),
  });
  route.post("/projects", {
    summary: "Create a project; the creator is its owner",
    access: "session",
    body: ProjectCreateBody,
    handler: async (request, reply) =>
      reply.code(201).send(ok(await projects.create(request.session!.account.id, request.body))),
  });
  route.get("/projects/:projectId", {
    summary: "A project: plan and its limits, counts, quota",
    access: "project.read",
    params,
    handler: async (request) => ok(await projects.get(pid(request), request.membership!.role)),
  });
  route.patch("/projects/:projectId", {
    summary: "Rename a project or change its description",
    access: "project.update",
    params,
    body: ProjectPatchBody,
    handler: async (request) =>
      ok(await projects.update(pid(request), request.membership!.role, request.body)),
  });
  route.delete("/projects/:projectId", {
    summary: "Delete a project with its keys (they stop working at once)",
    access: "project.delete",
    params,
    handler: async (request) => {
      await projects.delete(pid(request));
      return ok({ deleted: true });
    },
  });
  route.get("/projects/:projectId/dashboard", {
    summary: "Usage of the last 30 days, the month's quota, the plan",
    access: "usage.read",
    params,
    handler: async (request) => ok(await projects.dashboard(pid(request))),
  });
  route.get("/projects/:projectId/settings", {
    summary: "Resolution settings and collision rules",
    access: "settings.read",
    params,
    handler: async (request) => ok(await projects.getSettings(pid(request))),
  });
  route.put("/projects/:projectId/settings", {
    summary: "Replace the resolution settings and collision rules",
    access: "settings.write",
    params,
    body: SettingsBody,
    bodyLimit: SETTINGS_BODY_LIMIT,
    handler: async (request) => ok(await projects.putSettings(pid(request), request.body)),
  });
  route.get("/projects/:projectId/security", {
    summary: "Allowed IPs and origins, and the plan's limits",
    access: "security.read",
    params,
    handler: async (request) => ok(await projects.getSecurity(pid(request))),
  });
  route.put("/projects/:projectId/security", {
    summary: "Replace the allowed IPs/CIDR ranges and allowed origins",
    access: "security.write",
    params,
    body: SecurityBody,
    handler: async (request) => ok(await projects.putSecurity(pid(request), request.body)),
  });
}
