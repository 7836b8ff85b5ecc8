import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type LimitState, rateLimitHeaders } from "../../accounts/api-limits.js";
import type { ConsoleServices } from "../../accounts/console-services.js";
import { AppError } from "../../domain/errors.js";
import type { V1Extension } from "../routes/v1/v1.routes.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The key's rate and the project's quota after this request was counted. */
    limitState: LimitState | null;
    /** The request counted against the monthly quota (it was served, or refused after the limits). */
    quotaCounted: boolean;
    retryAfterS: number | null;
  }
}

/**
 * The plan's rate per key and monthly quota per project on every v1 route (after the api-key hook
 * and the allowlists): 429 RATE_LIMITED or QUOTA_EXCEEDED with Retry-After. Every answer to a
 * request with a valid key carries the RateLimit and RateLimit-Policy headers, refusals included.
 */
export function rateLimitHook(services: ConsoleServices): V1Extension {
  return (scope: FastifyInstance) => {
    scope.decorateRequest("limitState", null);
    scope.decorateRequest("quotaCounted", false);
    scope.decorateRequest("retryAfterS", null);
    scope.addHook("onRequest", async (request: FastifyRequest) => {
      const key = request.apiKey;
      const project = request.project;
      if (key === null || project === null) return;
      const decision = await services.limits.consume(key.id, project.id, services.projects.planOf(project));
      request.limitState = decision.state;
      if (!decision.allowed) {
        request.retryAfterS = decision.retryAfterS;
        throw new AppError(decision.code);
      }
      request.quotaCounted = true;
    });
    scope.addHook("onSend", async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const key = request.apiKey;
      const project = request.project;
      if (key === null || project === null) return payload;
      let state = request.limitState;
      if (state === null) {
        try {
          state = await services.limits.peek(key.id, project.id, services.projects.planOf(project));
        } catch {
          return payload;
        }
      }
      for (const [name, value] of Object.entries(rateLimitHeaders(state))) reply.header(name, value);
      if (request.retryAfterS !== null) reply.header("retry-after", String(request.retryAfterS));
      return payload;
    });
  };
}
