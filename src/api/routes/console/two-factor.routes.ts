import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import type { Config } from "../../../config/config.schema.js";
import { sessionTokenOf } from "../../plugins/session.plugin.js";
import { clientIpOf, sessionStarter } from "./console-session.js";
import {
  CONSOLE_BODY_LIMIT,
  doc,
  ok,
  ProjectParams,
  TwoFactorCodeBody,
  TwoFactorDisableBody,
  TwoFactorLoginBody,
  TwoFactorRuleBody,
} from "./console.schemas.js";

type P = { Params: Static<typeof ProjectParams> };

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

  scope.post<{ Body: Static<typeof TwoFactorLoginBody> }>(
    "/auth/login/two-factor",
    {
      config: { auth: "public" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Second step of a sign-in: a code of the app or a recovery code; sets the session cookie"),
        security: [],
        body: TwoFactorLoginBody,
      },
    },
    async (request, reply) => {
      const { account, sessionToken } = await twoFactor.completeLogin({
        challengeToken: request.body.challengeToken,
        factor: factorOf(request.body),
        ip: ipOf(request),
        previousSession: sessionTokenOf(request, config),
      });
      return ok({ account, csrfToken: startSession(reply, sessionToken) });
    },
  );

  scope.get(
    "/account/two-factor",
    { schema: doc("Whether two-factor sign-in is on, and how many recovery codes are left") },
    async (request) => ok(await twoFactor.status(request.session!.account.id)),
  );

  scope.post(
    "/account/two-factor/setup",
    {
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: doc("A new secret for an authenticator app, with its QR code (shown until confirmed)"),
    },
    async (request) => ok(await twoFactor.setup(request.session!.account)),
  );

  scope.post<{ Body: Static<typeof TwoFactorCodeBody> }>(
    "/account/two-factor/confirm",
    {
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Turn two-factor sign-in on with the app's first code; answers the ten recovery codes, once"),
        body: TwoFactorCodeBody,
      },
    },
    async (request) => ok(await twoFactor.confirm(request.session!.account.id, request.body.code)),
  );

  scope.post<{ Body: Static<typeof TwoFactorDisableBody> }>(
    "/account/two-factor/disable",
    {
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Turn two-factor sign-in off: the password and a code (or a recovery code)"),
        body: TwoFactorDisableBody,
      },
    },
    async (request) => {
      await twoFactor.disable(
        request.session!.account,
        request.body.password,
        factorOf(request.body),
        ipOf(request),
      );
      return ok({ disabled: true as const });
    },
  );

  scope.get<P>(
    "/projects/:projectId/two-factor",
    {
      config: { permission: "security.read" },
      schema: {
        ...doc("Whether the project requires two-factor sign-in of its members"),
        params: ProjectParams,
      },
    },
    async (request) => ok({ required: await twoFactor.isRequiredBy(request.membership!.projectId) }),
  );

  scope.put<P & { Body: Static<typeof TwoFactorRuleBody> }>(
    "/projects/:projectId/two-factor",
    {
      config: { permission: "security.write" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Require (or stop requiring) two-factor sign-in of every member"),
        params: ProjectParams,
        body: TwoFactorRuleBody,
      },
    },
    async (request) =>
      ok(
        await twoFactor.setRequired(
          request.membership!.projectId,
          request.body.required,
          request.session!.account.id,
        ),
      ),
  );
}
