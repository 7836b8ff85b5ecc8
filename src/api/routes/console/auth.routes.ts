import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { ONE_TIME_LOGIN_TTL_MINUTES } from "../../../accounts/accounts.service.js";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import type { Config } from "../../../config/config.schema.js";
import { passwordStrength } from "../../../accounts/password.js";
import { AppError } from "../../../domain/errors.js";
import { issuePreSessionToken, sessionCsrfToken } from "../../plugins/csrf.plugin.js";
import { sessionCookieName, sessionTokenOf, setCookie } from "../../plugins/session.plugin.js";
import { clientIpOf, sessionStarter } from "./console-session.js";
import {
  CONSOLE_BODY_LIMIT,
  doc,
  EmailBody,
  LoginBody,
  ok,
  PasswordChangeBody,
  PasswordStrengthBody,
  RegisterBody,
  ResetConfirmBody,
  TokenBody,
  TokenQuery,
} from "./console.schemas.js";

const PUBLIC = { auth: "public" } as const;
const ACCEPTED = { accepted: true, message: "If the address has an account, an e-mail is on its way." };

/** Registration, e-mail verification, login/logout, password reset and change, the session. */
export function authRoutes(scope: FastifyInstance, services: ConsoleServices, config: Config): void {
  const { accounts } = services;
  const ipOf = clientIpOf(services);
  const startSession = sessionStarter(services, config);

  scope.get(
    "/csrf",
    {
      config: PUBLIC,
      schema: { ...doc("A CSRF token for the routes used before signing in"), security: [] },
    },
    async (request, reply) => {
      if (request.session)
        return ok({ csrfToken: sessionCsrfToken(services.secret, request.session.sessionId) });
      return ok({ csrfToken: issuePreSessionToken(reply, services.secret, config) });
    },
  );

  scope.get<{ Querystring: Static<typeof TokenQuery> }>(
    "/auth/invitation",
    {
      config: PUBLIC,
      schema: {
        ...doc("What an invitation link is for (before registering)"),
        security: [],
        querystring: TokenQuery,
      },
    },
    async (request) => ok(await accounts.previewInvitation(request.query.token)),
  );

  scope.post<{ Body: Static<typeof RegisterBody> }>(
    "/auth/register",
    {
      config: PUBLIC,
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Create an account from an invitation; a verification link is e-mailed"),
        security: [],
        body: RegisterBody,
      },
    },
    async (request, reply) => {
      const account = await accounts.register(request.body);
      return reply
        .code(201)
        .send(ok({ account, message: "Check your mailbox to verify your e-mail address." }));
    },
  );

  scope.post<{ Body: Static<typeof PasswordStrengthBody> }>(
    "/auth/password-strength",
    {
      config: PUBLIC,
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("How strong a password is, by the registration rules (nothing is stored or logged)"),
        security: [],
        body: PasswordStrengthBody,
      },
    },
    async (request) => {
      await services.throttle.hit("strength", ipOf(request));
      return ok(passwordStrength(request.body.password, request.body.email));
    },
  );

  scope.get<{ Querystring: Static<typeof TokenQuery> }>(
    "/auth/one-time-login",
    {
      config: PUBLIC,
      schema: {
        ...doc("The demo account's one-time sign-in link (start banner): a session, then 303 to its project"),
        security: [],
        querystring: TokenQuery,
      },
    },
    async (request, reply) => {
      reply.header("referrer-policy", "no-referrer");
      let signedIn: Awaited<ReturnType<typeof accounts.oneTimeLogin>>;
      try {
        signedIn = await accounts.oneTimeLogin(request.query.token);
      } catch (e) {
        if (!(e instanceof AppError) || e.code !== "TOKEN_INVALID") throw e;
        const message = `This sign-in link was already used or has expired (it works once, for ${ONE_TIME_LOGIN_TTL_MINUTES} minutes). Each start of omniname prints a new one while the demo account has no password; or sign in at ${config.publicUrl}/console/.`;
        if (/application\/json/.test(request.headers.accept ?? ""))
          throw new AppError("TOKEN_INVALID", message);
        return reply.code(400).type("text/plain; charset=utf-8").send(`${message}\n`);
      }
      const previous = sessionTokenOf(request, config);
      if (previous) await accounts.logout(accounts.sessionIdOf(previous)).catch(() => {});
      startSession(reply, signedIn.sessionToken);
      const [first] = await accounts.projects.listProjectsOf(signedIn.account.id);
      return reply.redirect(first ? `/console/projects/${first.id}` : "/console/projects", 303);
    },
  );

  scope.post<{ Body: Static<typeof TokenBody> }>(
    "/auth/verify-email",
    {
      config: PUBLIC,
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: { ...doc("Verify an e-mail address"), security: [], body: TokenBody },
    },
    async (request) => ok({ account: await accounts.verifyEmail(request.body.token) }),
  );

  scope.post<{ Body: Static<typeof EmailBody> }>(
    "/auth/resend-verification",
    {
      config: PUBLIC,
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: { ...doc("Send the verification link again"), security: [], body: EmailBody },
    },
    async (request, reply) => {
      await accounts.resendVerification(request.body.email);
      return reply.code(202).send(ok(ACCEPTED));
    },
  );

  scope.post<{ Body: Static<typeof LoginBody> }>(
    "/auth/login",
    {
      config: PUBLIC,
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Sign in; sets the session cookie, or asks for the second factor"),
        security: [],
        body: LoginBody,
      },
    },
    async (request, reply) => {
      const account = await accounts.checkPassword({ ...request.body, ip: ipOf(request) });
      // Two-factor sign-in: no session yet; the second step (POST /auth/login/two-factor) names this.
      if (await services.twoFactor.isEnabled(account.id))
        return ok({
          twoFactorRequired: true,
          challengeToken: await services.twoFactor.issueChallenge(account),
        });
      const sessionToken = await accounts.startSession(account, sessionTokenOf(request, config));
      return ok({ account, csrfToken: startSession(reply, sessionToken) });
    },
  );

  scope.post("/auth/logout", { schema: doc("Sign out; ends the session") }, async (request, reply) => {
    await accounts.logout(request.session!.sessionId);
    setCookie(reply, config, sessionCookieName(config), "", 0);
    return ok({ signedOut: true });
  });

  scope.post<{ Body: Static<typeof EmailBody> }>(
    "/auth/password-reset",
    {
      config: PUBLIC,
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: { ...doc("E-mail a password reset link"), security: [], body: EmailBody },
    },
    async (request, reply) => {
      await accounts.requestPasswordReset(request.body.email);
      return reply.code(202).send(ok(ACCEPTED));
    },
  );

  scope.post<{ Body: Static<typeof ResetConfirmBody> }>(
    "/auth/password-reset/confirm",
    {
      config: PUBLIC,
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Set a new password with a reset link; ends every session"),
        security: [],
        body: ResetConfirmBody,
      },
    },
    async (request) => {
      await accounts.resetPassword(request.body.token, request.body.password);
      return ok({ reset: true });
    },
  );

  // The console's probe as a page loads: signed out is an answer (200, account null, a pre-session
  // CSRF token), not a 401, so a signed-out page logs no failed request in the browser.
  scope.get(
    "/session",
    {
      config: PUBLIC,
      schema: { ...doc("The signed-in account or null, and the CSRF token to write with"), security: [] },
    },
    async (request, reply) => {
      const s = request.session;
      if (s) return ok({ account: s.account, csrfToken: sessionCsrfToken(services.secret, s.sessionId) });
      return ok({ account: null, csrfToken: issuePreSessionToken(reply, services.secret, config) });
    },
  );

  scope.get("/account", { schema: doc("The signed-in account and its CSRF token") }, async (request) => {
    const s = request.session!;
    return ok({ account: s.account, csrfToken: sessionCsrfToken(services.secret, s.sessionId) });
  });

  scope.post<{ Body: Static<typeof PasswordChangeBody> }>(
    "/account/password",
    {
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Change the password; ends the other sessions and rotates this one"),
        body: PasswordChangeBody,
      },
    },
    async (request, reply) => {
      const s = request.session;
      if (!s) throw new AppError("UNAUTHENTICATED");
      const token = await accounts.changePassword(
        s.account.id,
        request.body.currentPassword,
        request.body.newPassword,
        ipOf(request),
      );
      return ok({ changed: true, csrfToken: startSession(reply, token) });
    },
  );
}
