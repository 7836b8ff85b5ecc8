import { type TSchema, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError, ERROR_CODES, isAppError } from "../../../domain/errors.js";
import type { ApiMetrics } from "../../plugins/api-metrics.plugin.js";
import { BATCH_MAX_BODY_BYTES, BATCH_MAX_INPUTS, itemError, parseBatchBody } from "./batch-body.js";
import { quote } from "./v1.params.js";
import { JSON_CONTENT_TYPE } from "./record-json.js";
import type { V1Answer, V1Endpoint, V1Endpoints } from "./v1.endpoints.js";
import { queryCheck } from "./v1.keywords.js";
import {
  ERROR_RESPONSES,
  ErrorEnvelope,
  FILTER_PARAMS,
  ForwardRecord,
  HistoryQuery,
  NameQuery,
  ok,
  ReverseQuery,
  ReverseRecord,
} from "./v1.schemas.js";

/** The URL's provenance / at / atBlock (already checked) as the strings a single request carries. */
function historyQueryOf(query: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["provenance", "at", "atBlock"])
    if (query[name] !== undefined && query[name] !== "") out[name] = String(query[name]);
  return out;
}

/** Items answered at once: enough to overlap PostgreSQL round trips, few enough to keep order cheap. */
const CONCURRENCY = 64;

const LIST_OPEN = Buffer.from('{"result":true,"data":[');
const LIST_CLOSE = Buffer.from("]}");
const COMMA = Buffer.from(",");

/** `{"input":…,` + the rest of the single endpoint's `{"result":true,"data":…}`. */
function okItem(input: string, answer: V1Answer): Buffer {
  const body = Buffer.isBuffer(answer) ? answer : Buffer.from(JSON.stringify(answer));
  return Buffer.concat([Buffer.from(`{"input":${JSON.stringify(input)},`), body.subarray(1)]);
}

function errorItem(input: string, e: AppError): Buffer {
  return Buffer.from(JSON.stringify({ input, result: false, error: { code: e.code, message: e.message } }));
}

interface BatchSpec<Q> {
  path: string;
  operationId: string;
  summary: string;
  /** The body field holding the inputs, and the query parameter each input becomes. */
  field: "domains" | "walletAddresses";
  param: "domain" | "walletAddress";
  querySchema: typeof NameQuery | typeof ReverseQuery;
  itemData: TSchema;
  endpoint: V1Endpoint<Q>;
}

function batchResponse(data: TSchema) {
  const input = Type.String({ description: "The input as sent." });
  return ok(
    Type.Array(
      Type.Union([
        Type.Object({ input, result: Type.Boolean({ const: true }), data }),
        Type.Object({ input, result: Type.Boolean({ const: false }), error: ErrorEnvelope.properties.error }),
      ]),
      { description: "One item per input, in input order." },
    ),
  );
}

// The body's network and provider take what the query parameters take (empty: absent), or null.
function batchBody(field: string, item: TSchema) {
  return Type.Object({
    [field]: Type.Array(item, { minItems: 1, maxItems: BATCH_MAX_INPUTS }),
    network: Type.Optional(Type.Union([FILTER_PARAMS.network, Type.Null()])),
    provider: Type.Optional(Type.Union([FILTER_PARAMS.provider, Type.Null()])),
  });
}

function addBatchRoute<Q>(scope: FastifyInstance, spec: BatchSpec<Q>, metrics: ApiMetrics): void {
  const sizes = metrics.batchInputs.labels({ route: `${scope.prefix}${spec.path}` });
  // Any string: an input that is not a valid name or address is its item's error, not the body's.
  const single = (spec.querySchema.properties as Record<string, TSchema>)[spec.param];
  // Each item is checked as a single request's query, and refused in the batch's words.
  const check = queryCheck(spec.querySchema);
  const itemSchema = Type.String({
    description: `As the single endpoint's ${spec.param}: ${String(single.description ?? "")}`,
  });
  scope.post(
    spec.path,
    {
      bodyLimit: BATCH_MAX_BODY_BYTES,
      schema: {
        operationId: spec.operationId,
        summary: spec.summary,
        description: `Up to ${BATCH_MAX_INPUTS} inputs (body up to 1 MiB). Each input counts against the key's rate and the project's quota; a batch that does not fit is refused whole (429, Retry-After) and counts nothing. A bad input, or a resolve without a match, is that item's error; a bad body is 400 (413 over 1 MiB).`,
        // provenance, at and atBlock on the batch's URL: checked with the request before any
        // work, then given to every item's endpoint as to a single request.
        querystring: HistoryQuery,
        requestBody: batchBody(spec.field, itemSchema),
        response: { 200: batchResponse(spec.itemData), ...ERROR_RESPONSES },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply): Promise<Buffer> => {
      const { inputs, filters } = parseBatchBody(request.body, spec.field);
      sizes.observe(inputs.length);
      await scope.chargeBatch(request, inputs.length);
      const items: Buffer[] = new Array(inputs.length);
      const options = historyQueryOf(request.query as Record<string, unknown>);
      const answerOne = async (i: number): Promise<void> => {
        // The query each item's endpoint gets: the input, the batch's filters and the URL's
        // options, checked as a single request's (an atBlock of another network than the
        // filter's is each item's INVALID_PARAMETER, as it is a single request's).
        const q: Record<string, unknown> = { [spec.param]: inputs[i], ...filters, ...options };
        const input = `${spec.field}[${i}]`;
        let refused = check(q, { what: "input", rename: (p) => (p === spec.param ? input : p) });
        // An empty name is missing: the batch says so in its own words.
        if (refused?.code === "MISSING_PARAMETER" && spec.param === "domain")
          refused = new AppError("MISSING_PARAMETER", `The input ${quote(input)} is empty.`);
        if (refused !== null) {
          items[i] = errorItem(inputs[i], refused);
          return;
        }
        try {
          items[i] = okItem(inputs[i], await spec.endpoint(q as Q, request, reply));
        } catch (e) {
          // A refusal of this input is its item's, and so is a failed live lookup of its name (an
          // offchain gateway's failure is that name's, not the server's); any other failure of the
          // server fails the call.
          if (!isAppError(e) || (ERROR_CODES[e.code].status >= 500 && e.code !== "OFFCHAIN_LOOKUP_FAILED"))
            throw e;
          items[i] = errorItem(inputs[i], itemError(e, spec.param, spec.field, i));
        }
      };
      for (let start = 0; start < inputs.length; start += CONCURRENCY) {
        const chunk: Array<Promise<void>> = [];
        for (let i = start; i < Math.min(inputs.length, start + CONCURRENCY); i++) chunk.push(answerOne(i));
        await Promise.all(chunk);
      }
      const parts: Buffer[] = [LIST_OPEN];
      for (let i = 0; i < items.length; i++) {
        if (i > 0) parts.push(COMMA);
        parts.push(items[i]);
      }
      parts.push(LIST_CLOSE);
      reply.header("content-type", JSON_CONTENT_TYPE);
      return Buffer.concat(parts);
    },
  );
}

/**
 * POST batch/resolve, batch/deep-resolve and batch/reverse-resolve: many names or addresses in one
 * call, each answered by the very function of its single endpoint (v1.endpoints.ts), in input order.
 * The body is checked whole before anything is counted (batch-body.ts); the inputs are then
 * counted against the limits all or nothing (rate-limit.plugin.ts, chargeBatch).
 */
export function batchRoutes(scope: FastifyInstance, endpoints: V1Endpoints, metrics: ApiMetrics): void {
  addBatchRoute(
    scope,
    {
      path: "/batch/resolve",
      operationId: "batchResolve",
      summary: "resolve for up to 1,000 domain names in one call.",
      field: "domains",
      param: "domain",
      querySchema: NameQuery,
      itemData: ForwardRecord,
      endpoint: endpoints.resolve,
    },
    metrics,
  );
  addBatchRoute(
    scope,
    {
      path: "/batch/deep-resolve",
      operationId: "batchDeepResolve",
      summary: "deep-resolve for up to 1,000 domain names in one call.",
      field: "domains",
      param: "domain",
      querySchema: NameQuery,
      itemData: Type.Array(ForwardRecord),
      endpoint: endpoints.deepResolve,
    },
    metrics,
  );
  addBatchRoute(
    scope,
    {
      path: "/batch/reverse-resolve",
      operationId: "batchReverseResolve",
      summary: "reverse-resolve for up to 1,000 wallet addresses in one call.",
      field: "walletAddresses",
      param: "walletAddress",
      querySchema: ReverseQuery,
      itemData: Type.Array(ReverseRecord),
      endpoint: endpoints.reverseResolve,
    },
    metrics,
  );
}
