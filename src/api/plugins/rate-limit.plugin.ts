import type {
  DoneFuncWithErrOrRes,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from "fastify";
import { type LimitState, rateLimitField, rateLimitPolicyField } from "../../accounts/api-limits.js";
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

function writeHeaders(request: FastifyRequest, reply: FastifyReply, state: LimitState): void {
  reply.header("ratelimit-policy", rateLimitPolicyField(state));
  reply.header("ratelimit", rateLimitField(state));
  if (request.retryAfterS !== null) reply.header("retry-after", String(request.retryAfterS));
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
    // Callback-style hooks: the only promise of a request here is the limiter's own.
    scope.addHook(
      "onRequest",
      (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
        const key = request.apiKey;
        const project = request.project;
        if (key === null || project === null) return done();
        services.limits.consume(key.id, project.id, services.projects.planOf(project)).then(
          (decision) => {
            request.limitState = decision.state;
            services.alerts.observe(key, project, decision);
            if (!decision.allowed) {
              request.retryAfterS = decision.retryAfterS;
              return done(new AppError(decision.code));
            }
            request.quotaCounted = true;
            done();
          },
          (e: unknown) => done(e as Error),
        );
      },
    );
    scope.addHook(
      "onSend",
      (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: DoneFuncWithErrOrRes) => {
        const key = request.apiKey;
        const project = request.project;
        if (key === null || project === null) return done(null, payload);
        const state = request.limitState;
        if (state !== null) {
          writeHeaders(request, reply, state);
          return done(null, payload);
        }
        let peek: Promise<LimitState>;
        try {
          peek = services.limits.peek(key.id, project.id, services.projects.planOf(project));
        } catch {
          return done(null, payload);
        }
        peek.then(
          (peeked) => {
            writeHeaders(request, reply, peeked);
            done(null, payload);
          },
          () => done(null, payload),
        );
      },
    );
  };
}
