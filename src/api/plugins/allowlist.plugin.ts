import type {
  DoneFuncWithErrOrRes,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from "fastify";
import { type CompiledAccess, checkAccess } from "../../accounts/access-rules.js";
import type { ConsoleServices } from "../../accounts/console-services.js";
import { AppError } from "../../domain/errors.js";
import type { V1Extension } from "./v1-extension.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The request's Origin when the project allows it: echoed in Access-Control-Allow-Origin. */
    corsOrigin: string | null;
  }
}

const EXPOSED = "RateLimit, RateLimit-Policy, Retry-After";

/** Checks the request against the project's rules: the refusal, or undefined when it may pass. */
function admit(
  services: ConsoleServices,
  request: FastifyRequest,
  access: CompiledAccess,
): AppError | undefined {
  const ip = services.clientIp(request.raw.socket?.remoteAddress, request.headers["x-forwarded-for"]);
  const origin = typeof request.headers.origin === "string" ? request.headers.origin : undefined;
  const verdict = checkAccess(access, ip, origin);
  if (verdict !== "ok") return new AppError(verdict);
  if (origin !== undefined) request.corsOrigin = origin;
  return undefined;
}

/**
 * The project's IP and origin allowlists on every v1 route (after the api-key hook): 403
 * IP_NOT_ALLOWED / ORIGIN_NOT_ALLOWED. A browser origin that passes gets CORS headers on the
 * answer, errors included, so the page can read the error envelope.
 */
export function allowlistHook(services: ConsoleServices): V1Extension {
  return (scope: FastifyInstance) => {
    scope.decorateRequest("corsOrigin", null);
    // Callback-style hooks: with the project's rules cached, a request costs no promise here.
    scope.addHook(
      "onRequest",
      (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
        const project = request.project;
        if (project === null) return done();
        const access = services.access.cached(project.id);
        if (access !== undefined) return done(admit(services, request, access));
        services.access
          .get(project.id)
          .then((a) => admit(services, request, a))
          .then(
            (refusal) => done(refusal),
            (e: unknown) => done(e as Error),
          );
      },
    );
    scope.addHook(
      "onSend",
      (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: DoneFuncWithErrOrRes) => {
        if (request.corsOrigin !== null) {
          reply.header("access-control-allow-origin", request.corsOrigin);
          reply.header("access-control-expose-headers", EXPOSED);
          reply.header("vary", "Origin");
        }
        done(null, payload);
      },
    );
  };
}

/**
 * Answers CORS preflights of the v1 API. A preflight carries no api-key, so it cannot know the
 * project: it allows the request shape (GET with an api-key header) for any origin, and the real
 * request is then checked against the project's allowed origins.
 */
export function corsPreflightRoutes(app: FastifyInstance, prefix: string): void {
  app.options(`${prefix}/*`, async (request, reply) => {
    // A preflight only for a path that serves GET: any other path is as unknown as it is to GET.
    const path = (request.url.split("?")[0] ?? "").replace(/\/+$/, "");
    if (!app.hasRoute({ method: "GET", url: path })) throw new AppError("NOT_FOUND");
    const origin = request.headers.origin;
    if (typeof origin === "string") {
      reply.header("access-control-allow-origin", origin);
      reply.header("vary", "Origin");
    }
    reply.header("access-control-allow-methods", "GET");
    reply.header("access-control-allow-headers", "api-key");
    reply.header("access-control-max-age", "600");
    return reply.code(204).send();
  });
}
