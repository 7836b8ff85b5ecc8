import type { FastifyError, FastifyInstance } from "fastify";
import { auditScope } from "../../../accounts/audit-log.js";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import type { Config } from "../../../config/config.schema.js";
import type { Resolution } from "../../../resolution/resolution.js";
import { AppError, ERROR_CODES } from "../../../domain/errors.js";
import { errorEnvelope, RETRY_SOON, toAppError } from "../../plugins/errors.plugin.js";
import { installCsrf } from "../../plugins/csrf.plugin.js";
import { installSession } from "../../plugins/session.plugin.js";
import { alertRoutes } from "./alerts.routes.js";
import { auditRoutes } from "./audit.routes.js";
import { authRoutes } from "./auth.routes.js";
import { projectRoutes } from "./projects.routes.js";
import { keysRoutes } from "./keys.routes.js";
import { teamRoutes } from "./team.routes.js";
import { tryRoutes } from "./try.routes.js";
import { twoFactorRoutes } from "./two-factor.routes.js";
import type { WebhookService } from "../../webhooks/webhook-service.js";
import { webhookRoutes } from "./webhooks.routes.js";

export const CONSOLE_PREFIX = "/console/api";

interface ConsoleRoutesOptions {
  services: ConsoleServices;
  config: Config;
  /** API v1's resolution (same store and ranker): "try it" answers what v1 would. */
  resolution: Resolution;
  webhooks: WebhookService;
}

/** Body validation failures named after the field, in the console's words. */
function consoleError(error: unknown): AppError {
  const err = error as FastifyError;
  if (Array.isArray(err?.validation) && err.validationContext === "body") {
    const v = err.validation[0] as {
      keyword: string;
      instancePath: string;
      params: Record<string, unknown>;
      message?: string;
    };
    if (v.instancePath === "" && v.keyword === "type")
      return new AppError("BAD_REQUEST", "A JSON object body is required.");
    const field =
      v.keyword === "required"
        ? String(v.params.missingProperty)
        : v.instancePath.slice(1).replace(/\//g, ".") || "body";
    if (v.keyword === "required")
      return new AppError("MISSING_PARAMETER", `The field "${field}" is required.`);
    if (v.keyword === "maxLength" || v.keyword === "maxItems")
      return new AppError("PARAMETER_TOO_LONG", `The field "${field}" ${v.message ?? "is too long"}.`);
    return new AppError("INVALID_PARAMETER", `The field "${field}" ${v.message ?? "is invalid"}.`);
  }
  return toAppError(error);
}

/**
 * The console API under /console/api: one encapsulated plugin with its session, permission and
 * CSRF hooks (see session.plugin.ts and csrf.plugin.ts) and the error envelope of the service.
 * Register it with `app.register(consoleRoutes, { prefix: CONSOLE_PREFIX, services, config })`.
 */
export async function consoleRoutes(scope: FastifyInstance, opts: ConsoleRoutesOptions): Promise<void> {
  const { services, config, resolution } = opts;
  // Each request runs in the audit scope: a change it writes is recorded with the signed-in
  // account and the caller's IP (read when the change is written, after the session hook).
  scope.addHook("onRequest", (request, _reply, done) => {
    const ip = () => services.clientIp(request.raw.socket?.remoteAddress, request.headers["x-forwarded-for"]);
    const actor = () => {
      const s = request.session;
      if (s === null) return null;
      return { type: "account" as const, accountId: s.account.id, email: s.account.email, ip: ip() };
    };
    auditScope.run({ actor, ip }, done);
  });
  installSession(scope, services, config);
  installCsrf(scope, services, config);

  // Console answers are per user: never cached by a browser or a proxy. Cache-Control: no-store
  // is set on the root (app.ts, noStoreUnder), so that a 404 under the prefix has it too.

  scope.setErrorHandler((error, request, reply) => {
    const e = consoleError(error);
    const { status } = ERROR_CODES[e.code];
    if (e.code === "STORE_UNAVAILABLE" && request.server.storeOutage !== undefined)
      request.server.storeOutage.refused(e.cause ?? e);
    else if (status >= 500)
      request.log.error({ err: e.cause ?? e, code: e.code, ...e.details }, "console request failed");
    else request.log.debug({ code: e.code }, "console request refused");
    if (e.code === "TOO_MANY_ATTEMPTS") reply.header("retry-after", String(e.details?.retryAfterS ?? 60));
    if (RETRY_SOON.has(e.code)) reply.header("retry-after", "1");
    const message = status >= 500 ? ERROR_CODES[e.code].message : e.message;
    return reply.code(status).type("application/json; charset=utf-8").send(errorEnvelope(e.code, message));
  });

  authRoutes(scope, services, config);
  projectRoutes(scope, services);
  alertRoutes(scope, services);
  auditRoutes(scope, services);
  teamRoutes(scope, services);
  keysRoutes(scope, services);
  tryRoutes(scope, services, resolution);
  twoFactorRoutes(scope, services, config);
  webhookRoutes(scope, opts.webhooks);
}
