import type { FastifyInstance } from "fastify";
import { ONE_TIME_LOGIN_TTL_MINUTES } from "../../../accounts/accounts.service.js";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import type { Config } from "../../../config/config.schema.js";
import { passwordStrength } from "../../../accounts/password.js";
import { AppError } from "../../../domain/errors.js";
import { issuePreSessionToken, sessionCsrfToken } from "../../plugins/csrf.plugin.js";
import { sessionCookieName, sessionTokenOf, setCookie } from "../../plugins/session.plugin.js";
import { clientIpOf, sessionStarter } from "./console-session.js";
import { consoleRouter } from "./console-route.js";
import {
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

const ACCEPTED = { accepted: true, message: "If the address has an account, an e-mail is on its way." };

/** Registration, e-mail verification, login/logout, password reset and change, the session. */
export function authRoutes(scope: FastifyInstance, services: ConsoleServices, config: Config): void {
  const { accounts } = services;
  const ipOf = clientIpOf(services);
  const startSession = sessionStarter(services, config);
  const route = consoleRouter(scope);

  route.get("/csrf", {
    summary: "A CSRF token for the routes used before signing in",
    access: "public",
    handler: async (request, reply) => {
      if (request.session)
        return ok({ csrfToken: sessionCsrfToken(services.secret, request.session.sessionId) });
      return ok({ csrfToken: issuePreSessionToken(reply, services.secret, config) });
    },
  });
  route.get("/auth/invitation", {
    summary: "What an invitation link is for (before registering)",
    access: "public",
    querystring: TokenQuery,
    handler: async (request) => ok(await accounts.previewInvitation(request.query.token)),
  });
  route.post("/auth/register", {
    summary: "Create an account from an invitation; a verification link is e-mailed",
    access: "public",
    body: RegisterBody,
    handler: async (request, reply) => {
      const account = await accounts.register(request.body);
      return reply
        .code(201)
        .send(ok({ account, message: "Check your mailbox to verify your e-mail address." }));
    },
  });
  route.post("/auth/password-strength", {
    summary: "How strong a password is, by the registration rules (nothing is stored or logged)",
    access: "public",
    body: PasswordStrengthBody,
    handler: async (request) => {
      await services.throttle.hit("strength", ipOf(request));
      return ok(passwordStrength(request.body.password, request.body.email));
    },
  });
  route.get("/auth/one-time-login", {
    summary: "The demo account's one-time sign-in link (start banner): a session, then 303 to its project",
    access: "public",
    querystring: TokenQuery,
    handler: async (request, reply) => {
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
  });
  route.post("/auth/verify-email", {
    summary: "Verify an e-mail address",
    access: "public",
    body: TokenBody,
    handler: async (request) => ok({ account: await accounts.verifyEmail(request.body.token) }),
  });
  route.post("/auth/resend-verification", {
    summary: "Send the verification link again",
    access: "public",
    body: EmailBody,
    handler: async (request, reply) => {
      await accounts.resendVerification(request.body.email);
      return reply.code(202).send(ok(ACCEPTED));
    },
  });
  route.post("/auth/login", {
    summary: "Sign in; sets the session cookie, or asks for the second factor",
    access: "public",
    body: LoginBody,
    handler: async (request, reply) => {
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
  });
  route.post("/auth/logout", {
    summary: "Sign out; ends the session",
    access: "session",
    handler: async (request, reply) => {
      await accounts.logout(request.session!.sessionId);
      setCookie(reply, config, sessionCookieName(config), "", 0);
      return ok({ signedOut: true });
    },
  });
  route.post("/auth/password-reset", {
    summary: "E-mail a password reset link",
    access: "public",
    body: EmailBody,
    handler: async (request, reply) => {
      await accounts.requestPasswordReset(request.body.email);
      return reply.code(202).send(ok(ACCEPTED));
    },
  });
  route.post("/auth/password-reset/confirm", {
    summary: "Set a new password with a reset link; ends every session",
    access: "public",
    body: ResetConfirmBody,
    handler: async (request) => {
      await accounts.resetPassword(request.body.token, request.body.password);
      return ok({ reset: true });
    },
  });
  // The console's probe as a page loads: signed out is an answer (200, account null, a pre-session
  // CSRF token), not a 401, so a signed-out page logs no failed request in the browser.
  route.get("/session", {
    summary: "The signed-in account or null, and the CSRF token to write with",
    access: "public",
    handler: async (request, reply) => {
      const s = request.session;
      if (s) return ok({ account: s.account, csrfToken: sessionCsrfToken(services.secret, s.sessionId) });
      return ok({ account: null, csrfToken: issuePreSessionToken(reply, services.secret, config) });
    },
  });
  route.get("/account", {
    summary: "The signed-in account and its CSRF token",
    access: "session",
    handler: async (request) => {
      const s = request.session!;
      return ok({ account: s.account, csrfToken: sessionCsrfToken(services.secret, s.sessionId) });
    },
  });
  route.post("/account/password", {
    summary: "Change the password; ends the other sessions and rotates this one",
    access: "session",
    body: PasswordChangeBody,
    handler: async (request, reply) => {
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
  });
}
