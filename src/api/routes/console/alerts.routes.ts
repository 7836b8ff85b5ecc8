import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import { doc, ok, ProjectParams } from "./console.schemas.js";

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

type R = { Params: Static<typeof ProjectParams>; Querystring: Static<typeof AlertsQuery> };

/** A project's quota and rate-limit alerts (accounts/usage-alerts.ts): owners and admins only. */
export function alertRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get<R>(
    "/projects/:projectId/alerts",
    {
      config: { permission: "alerts.read" },
      schema: {
        ...doc(
          "The project's recent usage alerts (quota at 80 % and 100 %, a key that keeps hitting its rate)",
        ),
        params: ProjectParams,
        querystring: AlertsQuery,
      },
    },
    async (request) =>
      ok(await services.alerts.list(request.membership!.projectId, Number(request.query.limit ?? 20))),
  );
}
