import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import {
  CONSOLE_BODY_LIMIT,
  doc,
  ok,
  ProjectCreateBody,
  ProjectParams,
  ProjectPatchBody,
  SecurityBody,
  SETTINGS_BODY_LIMIT,
  SettingsBody,
} from "./console.schemas.js";

type P = { Params: Static<typeof ProjectParams> };

/** Projects: list, create, describe, rename, delete; dashboard; settings; security. */
export function projectRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const { projects } = services;
  const pid = (request: { membership: { projectId: number } | null }) => request.membership!.projectId;

  scope.get(
    "/projects",
    { schema: doc("Projects of the signed-in account, with its role") },
    async (request) => ok(await projects.list(request.session!.account.id)),
  );

  scope.get(
    "/projects/allowance",
    { schema: doc("How many projects the signed-in account owns, and how many its plans allow it to own") },
    async (request) => ok(await projects.allowance(request.session!.account.id)),
  );

  scope.post<{ Body: Static<typeof ProjectCreateBody> }>(
    "/projects",
    {
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: { ...doc("Create a project; the creator is its owner"), body: ProjectCreateBody },
    },
    async (request, reply) =>
      reply.code(201).send(ok(await projects.create(request.session!.account.id, request.body))),
  );

  scope.get<P>(
    "/projects/:projectId",
    {
      config: { permission: "project.read" },
      schema: { ...doc("A project: plan and its limits, counts, quota"), params: ProjectParams },
    },
    async (request) => ok(await projects.get(pid(request), request.membership!.role)),
  );

  scope.patch<P & { Body: Static<typeof ProjectPatchBody> }>(
    "/projects/:projectId",
    {
      config: { permission: "project.update" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Rename a project or change its description"),
        params: ProjectParams,
        body: ProjectPatchBody,
      },
    },
    async (request) => ok(await projects.update(pid(request), request.membership!.role, request.body)),
  );

  scope.delete<P>(
    "/projects/:projectId",
    {
      config: { permission: "project.delete" },
      schema: { ...doc("Delete a project with its keys (they stop working at once)"), params: ProjectParams },
    },
    async (request) => {
      await projects.delete(pid(request));
      return ok({ deleted: true });
    },
  );

  scope.get<P>(
    "/projects/:projectId/dashboard",
    {
      config: { permission: "usage.read" },
      schema: { ...doc("Usage of the last 30 days, the month's quota, the plan"), params: ProjectParams },
    },
    async (request) => ok(await projects.dashboard(pid(request))),
  );

  scope.get<P>(
    "/projects/:projectId/settings",
    {
      config: { permission: "settings.read" },
      schema: { ...doc("Resolution settings and collision rules"), params: ProjectParams },
    },
    async (request) => ok(await projects.getSettings(pid(request))),
  );

  scope.put<P & { Body: Static<typeof SettingsBody> }>(
    "/projects/:projectId/settings",
    {
      config: { permission: "settings.write" },
      bodyLimit: SETTINGS_BODY_LIMIT,
      schema: {
        ...doc("Replace the resolution settings and collision rules"),
        params: ProjectParams,
        body: SettingsBody,
      },
    },
    async (request) => ok(await projects.putSettings(pid(request), request.body)),
  );

  scope.get<P>(
    "/projects/:projectId/security",
    {
      config: { permission: "security.read" },
      schema: { ...doc("Allowed IPs and origins, and the plan's limits"), params: ProjectParams },
    },
    async (request) => ok(await projects.getSecurity(pid(request))),
  );

  scope.put<P & { Body: Static<typeof SecurityBody> }>(
    "/projects/:projectId/security",
    {
      config: { permission: "security.write" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Replace the allowed IPs/CIDR ranges and allowed origins"),
        params: ProjectParams,
        body: SecurityBody,
      },
    },
    async (request) => ok(await projects.putSecurity(pid(request), request.body)),
  );
}
