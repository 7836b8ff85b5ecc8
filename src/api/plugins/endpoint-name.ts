import type { FastifyRequest } from "fastify";
import { BATCH_PATH } from "./rate-limit.plugin.js";

/**
 * `/svc/api/v1/deep-resolve` → `deep-resolve`, `/svc/api/v1/batch/resolve` → `batch-resolve`: the
 * endpoint name of the usage tables and of a key's scope (accounts/key-scope-names.ts). Null for a
 * request that matched no route (a 404).
 */
export function endpointOf(request: FastifyRequest): string | null {
  const url = request.routeOptions.url;
  if (url === undefined) return null;
  const name = url.slice(url.lastIndexOf("/") + 1) || "other";
  return url.startsWith(BATCH_PATH) ? `batch-${name}` : name;
}
