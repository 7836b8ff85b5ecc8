import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { V1Answer, V1Endpoints } from "./v1.endpoints.js";
import type { NameParams } from "./v1.params.js";
import { ERROR_RESPONSES, ForwardRecord, NameQuery, ok } from "./v1.schemas.js";

/** GET resolve and deep-resolve: the records of a name, best first (v1.endpoints.ts answers). */
export function resolveRoutes(scope: FastifyInstance, endpoints: V1Endpoints): void {
  scope.get<{ Querystring: NameParams }>(
    "/resolve",
    {
      schema: {
        operationId: "resolve",
        summary: "Records of a domain name: the highest-scored domain when several match.",
        description: "No match: 404 DOMAIN_NOT_FOUND. network and provider narrow the search.",
        querystring: NameQuery,
        response: { 200: ok(ForwardRecord), ...ERROR_RESPONSES },
      },
    },
    (request, reply): Promise<V1Answer> => endpoints.resolve(request.query, request, reply),
  );

  scope.get<{ Querystring: NameParams }>(
    "/deep-resolve",
    {
      schema: {
        operationId: "deepResolve",
        summary: "Records of a domain name: every matching domain, ordered by score.",
        description: "No match: 200 with an empty array.",
        querystring: NameQuery,
        response: { 200: ok(Type.Array(ForwardRecord)), ...ERROR_RESPONSES },
      },
    },
    (request, reply): Promise<V1Answer> => endpoints.deepResolve(request.query, request, reply),
  );
}
