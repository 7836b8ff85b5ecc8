import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { shapeRecord, type WireRecord } from "../../../resolution/record-shape.js";
import type { Resolution } from "../../../resolution/resolution.js";
import { createReverseAnswers, JSON_CONTENT_TYPE, type ReverseAnswers } from "./record-json.js";
import { filterOf, historyOptionsOf, type RankInputs, rankContext } from "./v1.params.js";
import { ERROR_RESPONSES, ok, ReverseQuery, ReverseRecord } from "./v1.schemas.js";

/**
 * GET reverse-resolve: the domains of a wallet address, primary (reverse) names first. The answer
 * is sent as bytes assembled from memoized record JSON (record-json.ts), as resolve's is.
 */
export function reverseResolveRoutes(
  scope: FastifyInstance,
  resolution: Resolution,
  inputs: RankInputs,
): void {
  let answers: ReverseAnswers | null = null;
  scope.get<{ Querystring: ReverseQuery }>(
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
    async (request, reply): Promise<Buffer | { result: true; data: WireRecord[] }> => {
      const q = request.query;
      const history = historyOptionsOf(q);
      const ranked = await resolution.reverseResolve(
        q.walletAddress,
        filterOf(q),
        rankContext(request, inputs, false),
        history,
      );
      if (history.provenance)
        return { result: true, data: ranked.map((r) => shapeRecord(r, "reverse", false)) };
      reply.header("content-type", JSON_CONTENT_TYPE);
      // Built on the first answer, from the routes' own serializer compiler (see resolve.routes.ts).
      answers ??= createReverseAnswers(
        reply.compileSerializationSchema(ReverseRecord) as unknown as (record: WireRecord) => string,
      );
      return answers.listBody(ranked);
    },
  );
}
