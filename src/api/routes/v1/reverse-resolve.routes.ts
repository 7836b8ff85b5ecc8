import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { V1Answer, V1Endpoints } from "./v1.endpoints.js";
import type { ReverseParams } from "./v1.params.js";
import { ERROR_RESPONSES, ok, ReverseQuery, ReverseRecord } from "./v1.schemas.js";

/**
 * GET reverse-resolve: the domains of a wallet address, primary (reverse) names first. The answer
 * is sent as bytes assembled from memoized record JSON (v1.endpoints.ts), as resolve's is.
 */
export function reverseResolveRoutes(scope: FastifyInstance, endpoints: V1Endpoints): void {
  scope.get<{ Querystring: ReverseParams }>(
    "/reverse-resolve",
    {
      schema: {
        operationId: "reverseResolve",
        summary: "Domains associated with a wallet address.",
        description:
          "Domains the address owns plus those whose reverse record names it, forward-verified (a reverse record counts only when the name resolves back to the address: for ENS its ETH address record is the address, for FNS and UNS the address owns it). Order: the address's reverse (primary) names first, then score descending, then name ascending. No match: 200 with an empty array.",
        querystring: ReverseQuery,
        response: { 200: ok(Type.Array(ReverseRecord)), ...ERROR_RESPONSES },
      },
    },
    (request, reply): Promise<V1Answer> => endpoints.reverseResolve(request.query, request, reply),
  );
}
