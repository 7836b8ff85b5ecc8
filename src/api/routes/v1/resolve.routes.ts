import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply } from "fastify";
import { AppError } from "../../../domain/errors.js";
import { shapeRecord, type WireRecord } from "../../../resolution/record-shape.js";
import type { Resolution } from "../../../resolution/resolution.js";
import { createForwardAnswers, type ForwardAnswers, JSON_CONTENT_TYPE } from "./record-json.js";
import {
  domainParamError,
  filterOf,
  historyOptionsOf,
  quote,
  type RankInputs,
  rankContext,
} from "./v1.params.js";
import { ERROR_RESPONSES, ForwardRecord, NameQuery, ok } from "./v1.schemas.js";

/**
 * GET resolve and deep-resolve: the records of a name, best first.
 *
 * Without `explain`, the answer is sent as bytes assembled from memoized record JSON
 * (record-json.ts): the bytes the response schema's serializer writes, without shaping, serializing
 * and encoding the same domain again on every request. With `explain`, the envelope goes through
 * the schema, as it does with `provenance` (the memoized bytes carry none).
 */
export function resolveRoutes(scope: FastifyInstance, resolution: Resolution, inputs: RankInputs): void {
  let answers: ForwardAnswers | null = null;
  // Built on the first answer: the record schema's serializer comes from the routes' own
  // serializer compiler (the one that serializes the envelope), through the reply.
  const answersFor = (reply: FastifyReply): ForwardAnswers => {
    reply.header("content-type", JSON_CONTENT_TYPE);
    answers ??= createForwardAnswers(
      reply.compileSerializationSchema(ForwardRecord) as unknown as (record: WireRecord) => string,
    );
    return answers;
  };

  scope.get<{ Querystring: NameQuery }>(
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
    async (request, reply): Promise<Buffer | { result: true; data: WireRecord }> => {
      const q = request.query;
      const explain = q.explain === true;
      const history = historyOptionsOf(q);
      const best = await resolution
        .resolve(q.domain, filterOf(q), rankContext(request, inputs, explain), history)
        .catch((e: unknown) => Promise.reject(domainParamError(e, q)));
      if (best === null) throw new AppError("DOMAIN_NOT_FOUND", `No domain matches ${quote(q.domain)}.`);
      if (explain || history.provenance) return { result: true, data: shapeRecord(best, "forward", explain) };
      return answersFor(reply).resolveBody(best);
    },
  );

  scope.get<{ Querystring: NameQuery }>(
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
    async (request, reply): Promise<Buffer | { result: true; data: WireRecord[] }> => {
      const q = request.query;
      const explain = q.explain === true;
      const history = historyOptionsOf(q);
      const ranked = await resolution
        .deepResolve(q.domain, filterOf(q), rankContext(request, inputs, explain), history)
        .catch((e: unknown) => Promise.reject(domainParamError(e, q)));
      if (explain || history.provenance)
        return { result: true, data: ranked.map((r) => shapeRecord(r, "forward", explain)) };
      return answersFor(reply).deepResolveBody(ranked);
    },
  );
}
