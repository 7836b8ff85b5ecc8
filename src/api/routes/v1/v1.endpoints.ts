import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../../domain/errors.js";
import { shapeRecord, type WireRecord } from "../../../resolution/record-shape.js";
import type { HistoryOptions } from "../../../domain/history.js";
import type { RankContext, RankedDomain } from "../../../resolution/rank.js";
import type { Resolution } from "../../../resolution/resolution.js";
import {
  type CacheLookup,
  createForwardAnswers,
  createReverseAnswers,
  type ForwardAnswers,
  JSON_CONTENT_TYPE,
  type ReverseAnswers,
} from "./record-json.js";
import {
  filterOf,
  historyOptionsOf,
  type NameParams,
  quote,
  type RankInputs,
  type ReverseParams,
  rankContext,
} from "./v1.params.js";
import { ForwardRecord, ReverseRecord } from "./v1.schemas.js";
import type { V1AnswerCache } from "../../v1-answer-cache.js";

/**
 * A v1 answer: `{"result":true,"data":…}` as bytes (record-json.ts), or the envelope as an object
 * for Fastify's serializer (explain). Either way what the single endpoint sends with status 200.
 */
export type V1Answer = Buffer | { result: true; data: WireRecord | WireRecord[] };

/** One v1 endpoint: the answer to one canonicalized query. Refusals and no-match are thrown AppErrors. */
export type V1Endpoint<Q> = (query: Q, request: FastifyRequest, reply: FastifyReply) => Promise<V1Answer>;

/**
 * The three v1 endpoints as functions of the parsed query: the single GET routes and the batch
 * calls run the very same function per name or address, so whatever a query option adds to the one
 * reaches the other.
 *
 * Without `explain`, the answer is bytes assembled from memoized record JSON (record-json.ts): the
 * bytes the response schema's serializer writes, without shaping, serializing and encoding the same
 * domain again on every request. With `explain` or `provenance`, the envelope goes through the
 * schema (the memoized bytes carry neither). `at` / `atBlock` answer from the map as it was then
 * (docs/api.md, "Time travel").
 *
 * @example
 * const endpoints = createV1Endpoints(resolution, rank);
 * const answer = await endpoints.resolve({ domain: "alice.wallet" }, request, reply);
 */
export function createV1Endpoints(
  resolution: Resolution,
  inputs: RankInputs,
  onCacheLookup?: CacheLookup,
  answers?: V1AnswerCache,
  /** Told of every answer given from (or kept in) the answer cache: the fast path (v1-fast-path.ts). */
  onCachedAnswer?: (request: FastifyRequest, endpoint: string, answerKey: string) => void,
) {
  let forward: ForwardAnswers | null = null;
  let reverse: ReverseAnswers | null = null;
  // Built on the first answer: the record schema's serializer comes from the routes' own
  // serializer compiler (the one that serializes the envelope), through the reply.
  const forwardFor = (reply: FastifyReply): ForwardAnswers => {
    reply.header("content-type", JSON_CONTENT_TYPE);
    forward ??= createForwardAnswers(
      reply.compileSerializationSchema(ForwardRecord) as unknown as (record: WireRecord) => string,
      onCacheLookup,
    );
    return forward;
  };

  /**
   * Whether the answer may come from (and go to) the answer cache (v1-answer-cache.ts): not with
   * explain, provenance or time travel, whose answers are not the plain bytes.
   */
  const cacheable = (q: NameParams | ReverseParams, history: HistoryOptions): boolean =>
    answers !== undefined && q.explain !== true && !history.provenance && history.at === undefined;

  /** The cached bytes of a query, or the answer computed now (and kept when it may be). */
  async function cached(
    endpoint: string,
    input: string,
    q: NameParams | ReverseParams,
    ctx: RankContext,
    request: FastifyRequest,
    reply: FastifyReply,
    compute: () => Promise<{ ranked: readonly RankedDomain[]; body: Buffer }>,
  ): Promise<Buffer> {
    const cache = answers as V1AnswerCache;
    const key = cache.keyOf(endpoint, ctx.projectSettings, ctx.country, q.network, q.provider, input);
    const hit = cache.get(key, ctx.now);
    if (hit !== undefined) {
      reply.header("content-type", JSON_CONTENT_TYPE);
      onCachedAnswer?.(request, endpoint, key);
      return hit;
    }
    const version = cache.version();
    const { ranked, body } = await compute();
    if (cache.put(key, version, ranked, body, ctx.now)) onCachedAnswer?.(request, endpoint, key);
    return body;
  }

  const rankedByName = (q: NameParams, ctx: RankContext, history?: HistoryOptions) =>
    resolution.deepResolve(q.domain, filterOf(q), ctx, history);

  const notFound = (q: NameParams) =>
    new AppError("DOMAIN_NOT_FOUND", `No domain matches ${quote(q.domain)}.`);

  const resolve: V1Endpoint<NameParams> = async (q, request, reply) => {
    const explain = q.explain === true;
    const history = historyOptionsOf(q);
    const ctx = rankContext(request, inputs, explain);
    if (cacheable(q, history))
      // The whole ranking, not only its first: another candidate can overtake it by the clock.
      return cached("resolve", q.domain, q, ctx, request, reply, async () => {
        const ranked = await rankedByName(q, ctx);
        const best = ranked[0];
        if (best === undefined) throw notFound(q);
        return { ranked, body: forwardFor(reply).resolveBody(best) };
      });
    const best = await resolution.resolve(q.domain, filterOf(q), ctx, history);
    if (best === null) throw notFound(q);
    if (explain || history.provenance) return { result: true, data: shapeRecord(best, "forward", explain) };
    return forwardFor(reply).resolveBody(best);
  };

  const deepResolve: V1Endpoint<NameParams> = async (q, request, reply) => {
    const explain = q.explain === true;
    const history = historyOptionsOf(q);
    const ctx = rankContext(request, inputs, explain);
    if (cacheable(q, history))
      return cached("deep-resolve", q.domain, q, ctx, request, reply, async () => {
        const ranked = await rankedByName(q, ctx);
        return { ranked, body: forwardFor(reply).deepResolveBody(ranked) };
      });
    const ranked = await rankedByName(q, ctx, history);
    if (explain || history.provenance)
      return { result: true, data: ranked.map((r) => shapeRecord(r, "forward", explain)) };
    return forwardFor(reply).deepResolveBody(ranked);
  };

  const reverseFor = (reply: FastifyReply): ReverseAnswers => {
    reply.header("content-type", JSON_CONTENT_TYPE);
    reverse ??= createReverseAnswers(
      reply.compileSerializationSchema(ReverseRecord) as unknown as (record: WireRecord) => string,
      onCacheLookup,
    );
    return reverse;
  };

  const reverseResolve: V1Endpoint<ReverseParams> = async (q, request, reply) => {
    const history = historyOptionsOf(q);
    const ctx = rankContext(request, inputs, false);
    const ranked = () => resolution.reverseResolve(q.walletAddress, filterOf(q), ctx, history);
    if (cacheable(q, history))
      return cached("reverse-resolve", q.walletAddress, q, ctx, request, reply, async () => {
        const list = await ranked();
        return { ranked: list, body: reverseFor(reply).listBody(list) };
      });
    const list = await ranked();
    if (history.provenance) return { result: true, data: list.map((r) => shapeRecord(r, "reverse", false)) };
    return reverseFor(reply).listBody(list);
  };

  return { resolve, deepResolve, reverseResolve };
}

export type V1Endpoints = ReturnType<typeof createV1Endpoints>;
