import type { Static } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import {
  CONSOLE_BODY_LIMIT,
  doc,
  InvitationParams,
  MemberBody,
  MemberParams,
  ok,
  ProjectParams,
  RoleBody,
} from "./console.schemas.js";

type P = { Params: Static<typeof ProjectParams> };

function actor(request: FastifyRequest) {
  return { id: request.session!.account.id, role: request.membership!.role };
}

/** Team (members, invitations) of a project. */
export function teamRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const { projects } = services;
  const pid = (request: FastifyRequest) => request.membership!.projectId;

  scope.get<P>(
    "/projects/:projectId/members",
    {
      config: { permission: "members.read" },
      schema: { ...doc("Members and pending invitations"), params: ProjectParams },
    },
    async (request) => ok(await projects.members(pid(request))),
  );

  scope.post<P & { Body: Static<typeof MemberBody> }>(
    "/projects/:projectId/members",
    {
      config: { permission: "members.write" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Add a member by e-mail (an invitation when the address has no account)"),
        params: ProjectParams,
        body: MemberBody,
      },
    },
    async (request, reply) => {
      const r = await projects.addMember(pid(request), actor(request), request.body.email, request.body.role);
      return reply.code(r.status === "member" ? 201 : 202).send(ok(r));
    },
  );

  scope.patch<{ Params: Static<typeof MemberParams>; Body: Static<typeof RoleBody> }>(
    "/projects/:projectId/members/:accountId",
    {
      config: { permission: "members.write" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: { ...doc("Change a member's role"), params: MemberParams, body: RoleBody },
    },
    async (request) =>
      ok(
        await projects.changeRole(
          pid(request),
          actor(request),
          Number(request.params.accountId),
          request.body.role,
        ),
      ),
  );

  scope.delete<{ Params: Static<typeof MemberParams> }>(
    "/projects/:projectId/members/:accountId",
    { config: { permission: "members.write" }, schema: { ...doc("Remove a member"), params: MemberParams } },
    async (request) => {
      await projects.removeMember(pid(request), actor(request), Number(request.params.accountId));
      return ok({ removed: true });
    },
  );

  scope.post<P>(
    "/projects/:projectId/leave",
    {
      config: { permission: "project.read", twoFactorExempt: true },
      schema: { ...doc("Leave the project (not as its last owner)"), params: ProjectParams },
    },
    async (request) => {
      await projects.leave(pid(request), request.session!.account.id);
      return ok({ left: true });
    },
  );

  scope.delete<{ Params: Static<typeof InvitationParams> }>(
    "/projects/:projectId/invitations/:invitationId",
    {
      config: { permission: "members.write" },
      schema: { ...doc("Cancel a pending invitation"), params: InvitationParams },
    },
    async (request) => {
      await projects.cancelInvitation(pid(request), Number(request.params.invitationId));
      return ok({ cancelled: true });
    },
  );
}
