import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import { consoleRouter, projectIdOf as pid } from "./console-route.js";
import {
  InvitationParams,
  MemberBody,
  MemberParams,
  ok,
  ProjectParams,
  RoleBody,
} from "./console.schemas.js";

function actor(request: FastifyRequest) {
  return { id: request.session!.account.id, role: request.membership!.role };
}

/** Team (members, invitations) of a project. */
export function teamRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const { projects } = services;
  const route = consoleRouter(scope);

  route.get("/projects/:projectId/members", {
    summary: "Members and pending invitations",
    access: "members.read",
    params: ProjectParams,
    handler: async (request) => ok(await projects.members(pid(request))),
  });
  route.post("/projects/:projectId/members", {
    summary: "Add a member by e-mail (an invitation when the address has no account)",
    access: "members.write",
    params: ProjectParams,
    body: MemberBody,
    handler: async (request, reply) => {
      const r = await projects.addMember(pid(request), actor(request), request.body.email, request.body.role);
      return reply.code(r.status === "member" ? 201 : 202).send(ok(r));
    },
  });
  route.patch("/projects/:projectId/members/:accountId", {
    summary: "Change a member's role",
    access: "members.write",
    params: MemberParams,
    body: RoleBody,
    handler: async (request) =>
      ok(
        await projects.changeRole(
          pid(request),
          actor(request),
          Number(request.params.accountId),
          request.body.role,
        ),
      ),
  });
  route.delete("/projects/:projectId/members/:accountId", {
    summary: "Remove a member",
    access: "members.write",
    params: MemberParams,
    handler: async (request) => {
      await projects.removeMember(pid(request), actor(request), Number(request.params.accountId));
      return ok({ removed: true });
    },
  });
  route.post("/projects/:projectId/leave", {
    summary: "Leave the project (not as its last owner)",
    access: "project.read",
    twoFactorExempt: true,
    params: ProjectParams,
    handler: async (request) => {
      await projects.leave(pid(request), request.session!.account.id);
      return ok({ left: true });
    },
  });
  route.delete("/projects/:projectId/invitations/:invitationId", {
    summary: "Cancel a pending invitation",
    access: "members.write",
    params: InvitationParams,
    handler: async (request) => {
      await projects.cancelInvitation(pid(request), Number(request.params.invitationId));
      return ok({ cancelled: true });
    },
  });
}
