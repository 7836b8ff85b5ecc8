import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { ApiKeyVerifier } from "../../../accounts/api-keys.js";
import type { AppContext } from "../../../app-context.js";
import { createPublicZoneLookup } from "../../../dns/dns-role.js";
import type { Resolution } from "../../../resolution/resolution.js";
import fastifySse from "@fastify/sse";
import { type ChangesRoutesOptions, changesRoutes } from "../../changes/changes.routes.js";
import { requireApiKey } from "../../plugins/api-key.plugin.js";
import { keyScopeHook } from "../../plugins/scope.plugin.js";
import type { ApiMetrics } from "../../plugins/api-metrics.plugin.js";
import { dnsQueryRoutes } from "../dns-query.routes.js";
import { batchRoutes } from "./batch.routes.js";
import { resolveRoutes } from "./resolve.routes.js";
import { reverseResolveRoutes } from "./reverse-resolve.routes.js";
import { createV1Endpoints } from "./v1.endpoints.js";
import { v1ValidatorCompiler } from "./v1.keywords.js";
import type { RankInputs } from "./v1.params.js";
import type { V1Extension } from "../../plugins/v1-extension.js";
import type { V1AnswerCache } from "../../v1-answer-cache.js";
import type { V1FastPath } from "../../v1-fast-path.js";

interface V1Options {
  ctx: AppContext;
  resolution: Resolution;
  verifier: ApiKeyVerifier;
  extensions: readonly V1Extension[];
  rank: RankInputs;
  metrics: ApiMetrics;
  changes: ChangesRoutesOptions;
  /** The answers themselves, exact to the map's read version (v1-answer-cache.ts). */
  answers: V1AnswerCache;
  /** The fast path in front of Fastify (v1-fast-path.ts), told of every answer it could replay. */
  fastPath?: V1FastPath;
}

/** The authenticated v1 scope (registered under /svc/api/v1): one encapsulated plugin. */
export async function v1Routes(scope: FastifyInstance, opts: V1Options): Promise<void> {
  requireApiKey(scope, opts.verifier, opts.ctx.clock);
  keyScopeHook(scope);
  for (const extend of opts.extensions) await extend(scope, opts.ctx);
  // One validation checks and canonicalizes each route's query (v1.schemas.ts, v1.keywords.ts).
  scope.setValidatorCompiler(v1ValidatorCompiler);
  // The package's default export is the plugin wrapped by fastify-plugin (so its route hook applies
  // to this scope's routes); its type declarations describe the CommonJS module object instead.
  await scope.register(fastifySse as unknown as FastifyPluginAsync);
  const fast = opts.fastPath;
  const endpoints = createV1Endpoints(
    opts.resolution,
    opts.rank,
    opts.metrics.answerCache,
    opts.answers,
    fast ? (request, endpoint, key) => fast.learn(request, endpoint, key) : undefined,
  );
  resolveRoutes(scope, endpoints);
  reverseResolveRoutes(scope, endpoints);
  batchRoutes(scope, endpoints, opts.metrics);
  changesRoutes(scope, opts.changes);
  // The project's own DoH: the same zones, ranked under the key's project settings.
  const zones = createPublicZoneLookup(opts.ctx);
  await scope.register(dnsQueryRoutes, {
    lookup: (request) => zones.forProject(request.project?.settings ?? {}),
  });
}
