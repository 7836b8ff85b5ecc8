import type { FastifyInstance } from "fastify";

/**
 * A small OpenAPI 3.1 generator over the route schemas (no @fastify/swagger: this is all the API
 * needs, and it keeps the document exactly in step with what Ajv validates and fast-json-stringify
 * writes). Routes are collected with an onRoute hook; the document is built once, on first request.
 */

interface CollectedRoute {
  method: string;
  url: string;
  schema: Record<string, unknown>;
}

type JsonSchema = Record<string, unknown>;

/** TypeBox schemas carry symbol keys (and Fastify may add $id-less copies): keep plain JSON only. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const DOC_KEYS = ["summary", "description", "operationId", "tags", "security"] as const;

function operation(route: CollectedRoute): Record<string, unknown> {
  const op: Record<string, unknown> = {};
  for (const k of DOC_KEYS) if (route.schema[k] !== undefined) op[k] = plain(route.schema[k]);
  const qs = route.schema.querystring as JsonSchema | undefined;
  if (qs && typeof qs.properties === "object" && qs.properties !== null) {
    const required = new Set((qs.required as string[] | undefined) ?? []);
    op.parameters = Object.entries(qs.properties as Record<string, JsonSchema>).map(([name, s]) => {
      const { description, examples, ...schema } = plain(s);
      return {
        name,
        in: "query",
        required: required.has(name),
        ...(description !== undefined ? { description } : {}),
        ...(Array.isArray(examples) && examples.length > 0 ? { example: examples[0] } : {}),
        schema,
      };
    });
  }
  const body = route.schema.requestBody as JsonSchema | undefined;
  if (body !== undefined)
    op.requestBody = { required: true, content: { "application/json": { schema: plain(body) } } };
  const responses: Record<string, unknown> = {};
  const declared = (route.schema.response ?? {}) as Record<string, JsonSchema>;
  for (const [status, s] of Object.entries(declared)) {
    const { description, ...schema } = plain(s);
    responses[status.toUpperCase()] = {
      description: typeof description === "string" ? description : status === "200" ? "Success." : "Error.",
      content: { "application/json": { schema } },
    };
  }
  if (Object.keys(responses).length === 0) responses.default = { description: "Response." };
  op.responses = responses;
  // A route that documents itself (content types other than JSON): its operation as written.
  const own = route.schema.openapi as Record<string, unknown> | undefined;
  return own === undefined ? op : { ...op, ...plain(own) };
}

interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

/** Builds the document from the collected routes (exported for tests and `omniname` tooling). */
function buildOpenApiDocument(routes: readonly CollectedRoute[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = paths[r.url] ?? {};
    path[r.method.toLowerCase()] = operation(r);
    paths[r.url] = path;
  }
  return {
    openapi: "3.1.0",
    info,
    servers: [{ url: "/" }],
    paths,
    components: {
      securitySchemes: { ApiKey: { type: "apiKey", in: "header", name: "api-key" } },
    },
    security: [{ ApiKey: [] }],
  };
}

/**
 * Collects the documented routes (those with a schema that `include` accepts, HEAD excluded) and
 * serves the document at `path`. Call before any route is added: onRoute sees only later routes.
 */
export function installOpenApi(
  app: FastifyInstance,
  path: string,
  info: OpenApiInfo,
  include: (url: string) => boolean = () => true,
): void {
  const routes: CollectedRoute[] = [];
  app.addHook("onRoute", (route) => {
    if (!route.schema || route.url === path || !include(route.url)) return;
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) {
      if (m === "HEAD") continue;
      routes.push({ method: m, url: route.url, schema: route.schema as Record<string, unknown> });
    }
  });
  let doc: string | null = null;
  app.get(path, async (_request, reply) => {
    doc ??= JSON.stringify(buildOpenApiDocument(routes, info));
    return reply.type("application/json; charset=utf-8").send(doc);
  });
}

declare module "fastify" {
  interface FastifySchema {
    operationId?: string;
    summary?: string;
    description?: string;
    tags?: readonly string[];
    /**
     * The JSON body, for the document only: a route that checks its body itself (worded refusals,
     * no type coercion) declares it here rather than as `body`, which Fastify would validate.
     */
    requestBody?: unknown;
    /** OpenAPI operation fields written by hand, over the generated ones (documentation only). */
    openapi?: Record<string, unknown>;
    /** `[]` for a public route; absent: the document's default (api-key). */
    security?: ReadonlyArray<Record<string, readonly string[]>>;
  }
}
