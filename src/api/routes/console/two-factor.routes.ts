import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import type { Config } from "../../../config/config.schema.js";
import { sessionTokenOf } from "../../plugins/session.plugin.js";
import { clientIpOf, sessionStarter } from "./console-session.js";
import { consoleRouter, projectIdOf } from "./console-route.js";
import {
  ok,
  ProjectParams,
  TwoFactorCodeBody,
  TwoFactorDisableBody,
  TwoFactorLoginBody,
  TwoFactorRuleBody,
} from "./console.schemas.js";

/**
 * Two-factor sign-in: the sign-in's second step (public: the password step's token stands in for
 * the session), the account's enrolment, recovery codes and turning it off (session), and the
 * project rule that requires it (owners and admins set it; every member reads it).
 */
export function twoFactorRoutes(scope: FastifyInstance, services: ConsoleServices, config: Config): void {
  const { twoFactor } = services;
  const ipOf = clientIpOf(services);
  const startSession = sessionStarter(services, config);
  const factorOf = (b: { code?: string; recoveryCode?: string }) => ({
    ...(b.code === undefined ? {} : { code: b.code }),
    ...(b.recoveryCode === undefined ? {} : { recoveryCode: b.recoveryCode }),
  });
  const route = consoleRouter(scope);

  route.post("/auth/login/two-factor", {
    summary: "Second step of a sign-in: a code of the app or a recovery code; sets the session cookie",
    access: "public",
    body: TwoFactorLoginBody,
    handler: async (request, reply) => {
      const { account, sessionToken } = await twoFactor.completeLogin({
        challengeToken: request.body.challengeToken,
        factor: factorOf(request.body),
        ip: ipOf(request),
        previousSession: sessionTokenOf(request, config),
      });
      return ok({ account, csrfToken: startSession(reply, sessionToken) });
    },
  });
  route.get("/account/two-factor", {
    summary: "Whether two-factor sign-in is on, and how many recovery codes are left",
    access: "session",
    handler: async (request) => ok(await twoFactor.status(request.session!.account.id)),
  });
  route.post("/account/two-factor/setup", {
    summary: "A new secret for an authenticator app, with its QR code (shown until confirmed)",
    access: "session",
    handler: async (request) => ok(await twoFactor.setup(request.session!.account)),
  });
  route.post("/account/two-factor/confirm", {
    summary: "Turn two-factor sign-in on with the app's first code; answers the ten recovery codes, once",
    access: "session",
    body: TwoFactorCodeBody,
    handler: async (request) => ok(await twoFactor.confirm(request.session!.account.id, request.body.code)),
  });
  route.post("/account/two-factor/disable", {
    summary: "Turn two-factor sign-in off: the password and a code (or a recovery code)",
    access: "session",
    body: TwoFactorDisableBody,
    handler: async (request) => {
      await twoFactor.disable(
        request.session!.account,
        request.body.password,
        factorOf(request.body),
        ipOf(request),
      );
      return ok({ disabled: true as const });
    },
  });
  route.get("/projects/:projectId/two-factor", {
    summary: "Whether the project requires two-factor sign-in of its members",
    access: "security.read",
    params: ProjectParams,
    handler: async (request) => ok({ required: await twoFactor.isRequiredBy(projectIdOf(request)) }),
  });
  route.put("/projects/:projectId/two-factor", {
    summary: "Require (or stop requiring) two-factor sign-in of every member",
    access: "security.write",
    params: ProjectParams,
    body: TwoFactorRuleBody,
    handler: async (request) =>
      ok(
        await twoFactor.setRequired(projectIdOf(request), request.body.required, request.session!.account.id),
      ),
  });
}
