import type { Static, TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteHandlerMethod } from "fastify";
import type { Permission } from "../../../accounts/permissions.js";
import { CONSOLE_BODY_LIMIT, doc } from "./console.schemas.js";

/**
 * Who may call a console route: anyone (`"public"`, e.g. sign-in), any signed-in account
 * (`"session"`, e.g. the account's own settings), or a member of the project named by
 * `:projectId` whose role holds the permission (docs/permissions.md). The session plugin enforces
 * it (session.plugin.ts); docs/permissions.md lists it and test/console/permissions.test.ts
 * checks the two against each other.
 */
export type ConsoleAccess = "public" | "session" | Permission;

/** One console route: what it is for, who may call it, what it accepts, what it does. */
export interface ConsoleRoute<P extends TSchema, B extends TSchema, Q extends TSchema> {
  /** The OpenAPI summary (GET /svc/api/openapi.json, tag "console"). */
  summary: string;
  access: ConsoleAccess;
  /** A project route a member may use while the project's two-factor rule stops them (leave). */
  twoFactorExempt?: true;
  params?: P;
  body?: B;
  querystring?: Q;
  /** Bytes; CONSOLE_BODY_LIMIT unless the body is known to be larger (settings, webhook filters). */
  bodyLimit?: number;
  handler: (
    request: FastifyRequest<{ Params: Static<P>; Body: Static<B>; Querystring: Static<Q> }>,
    reply: FastifyReply,
  ) => Promise<unknown>;
}

type Declare = <P extends TSchema = TSchema, B extends TSchema = TSchema, Q extends TSchema = TSchema>(
  url: string,
  route: ConsoleRoute<P, B, Q>,
) => void;

/** The project of a route with a permission (set by the session plugin once the role was checked). */
export function projectIdOf(request: FastifyRequest): number {
  return request.membership!.projectId;
}

/**
 * Declares the console's routes on `scope`, one entry each: the schema (summary, security,
 * params, body, query), the access the session plugin checks, and the body limit follow from the
 * entry, so no route can be added without saying who may call it.
 *
 * @example
 * const route = consoleRouter(scope);
 * route.get("/projects/:projectId/alerts", {
 *   summary: "The project's recent usage alerts",
 *   access: "alerts.read",
 *   params: ProjectParams,
 *   handler: async (request) => ok(await alerts.list(projectIdOf(request), 20)),
 * });
 */
export function consoleRouter(
  scope: FastifyInstance,
): Record<"get" | "post" | "put" | "patch" | "delete", Declare> {
  const declare =
    (method: HTTPMethods): Declare =>
    (url, route) => {
      const { access } = route;
      const permission = access === "public" || access === "session" ? undefined : access;
      // Caught when the app is built, not on the first request (session.plugin.ts would answer 500).
      if (permission !== undefined && !url.includes(":projectId"))
        throw new Error(`console route ${method} ${url}: a permission needs a :projectId`);
      const extra: Record<string, TSchema> = {};
      if (route.params) extra.params = route.params;
      if (route.body) extra.body = route.body;
      if (route.querystring) extra.querystring = route.querystring;
      scope.route({
        method,
        url,
        bodyLimit: route.bodyLimit ?? CONSOLE_BODY_LIMIT,
        config: {
          ...(access === "public" ? { auth: "public" as const } : {}),
          ...(permission === undefined ? {} : { permission }),
          ...(route.twoFactorExempt ? { twoFactorExempt: true } : {}),
        },
        schema: { ...doc(route.summary), ...(access === "public" ? { security: [] } : {}), ...extra },
        handler: route.handler as RouteHandlerMethod,
      });
    };
  return {
    get: declare("GET"),
    post: declare("POST"),
    put: declare("PUT"),
    patch: declare("PATCH"),
    delete: declare("DELETE"),
  };
}
