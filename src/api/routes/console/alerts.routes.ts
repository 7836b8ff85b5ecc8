import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import { consoleRouter, projectIdOf } from "./console-route.js";
import { ok, ProjectParams } from "./console.schemas.js";

const AlertsQuery = Type.Object(
  {
    // A pattern, not an integer schema: the validator's number coercion lets a 400-digit value
    // through as Infinity, which the database then refuses.
    limit: Type.Optional(
      Type.String({
        pattern: "^(100|[1-9][0-9]?)$",
        description: "How many alerts, newest first: 1 to 100 (20)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** A project's quota and rate-limit alerts (accounts/usage-alerts.ts): owners and admins only. */
export function alertRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  consoleRouter(scope).get("/projects/:projectId/alerts", {
    summary: "The project's recent usage alerts (quota at 80 % and 100 %, a key that keeps hitting its rate)",
    access: "alerts.read",
    params: ProjectParams,
    querystring: AlertsQuery,
    handler: async (request) =>
      ok(await services.alerts.list(projectIdOf(request), Number(request.query.limit ?? 20))),
  });
}
