import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.js";

/**
 * An extension of the v1 scope, run after the api-key hook is installed and before the routes
 * are added. Hooks it adds run for every v1 route, after authentication, so `request.apiKey` and
 * `request.project` are set: the place for IP/origin allowlists (onRequest, 403), rate limits and
 * quotas (onRequest, 429), usage recording (onResponse).
 *
 * @example
 * const allowlist: V1Extension = (scope) => {
 *   scope.addHook("onRequest", async (request) => {
 *     if (!isAllowed(request.project!, request.ip)) throw new AppError("IP_NOT_ALLOWED");
 *   });
 * };
 * buildApp(ctx, { services, v1Hooks: [allowlist] });
 */
export type V1Extension = (scope: FastifyInstance, ctx: AppContext) => void | Promise<void>;
