import type {
  DoneFuncWithErrOrRes,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from "fastify";
import type { IncomingMessage } from "node:http";
import {
  type LimitDecision,
  type LimitState,
  rateLimitField,
  rateLimitPolicyField,
} from "../../accounts/api-limits.js";
import type { ConsoleServices } from "../../accounts/console-services.js";
import { AppError } from "../../domain/errors.js";
import type { V1Extension } from "./v1-extension.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The key's rate and the project's quota after this request was counted. */
    limitState: LimitState | null;
    /** The request counted against the monthly quota (it was served, or refused after the limits). */
    quotaCounted: boolean;
    retryAfterS: number | null;
    /** Names or addresses of a batch call, counted once its body is valid; 0 for other requests. */
    batchInputs: number;
    /** A batch call past the key and the allowlists, not counted yet (its body is still unread). */
    batchUncounted: boolean;
  }
  interface FastifyInstance {
    /**
     * Counts a batch call's inputs against the key's rate and the project's quota, all or nothing
     * (ApiLimits.consume); rejects with the 429 to answer when the batch does not fit.
     */
    chargeBatch(request: FastifyRequest, inputs: number): Promise<void>;
  }
}

/**
 * Limit decisions the v1 fast path took for requests it then handed to Fastify (a refusal, or an
 * answer gone in between; v1-fast-path.ts): the onRequest hook takes the decision instead of
 * counting the request a second time.
 */
export const decidedAtTheDoor = new WeakMap<IncomingMessage, LimitDecision>();

/** Paths whose requests are counted per input once the body is read (chargeBatch), not on arrival. */
export const BATCH_PATH = "/svc/api/v1/batch/";

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
    scope.decorateRequest("batchInputs", 0);
    scope.decorateRequest("batchUncounted", false);
    scope.decorate("chargeBatch", async (request: FastifyRequest, inputs: number) => {
      const key = request.apiKey;
      const project = request.project;
      if (key === null || project === null) return;
      const plan = services.projects.planOf(project);
      const decision = await services.limits.consume(key.id, project.id, plan, inputs);
      request.limitState = decision.state;
      if (!decision.allowed) {
        request.retryAfterS = decision.retryAfterS;
        const perWindow = plan.rps * plan.rateWindowS;
        // Retrying cannot help a batch larger than the whole window: say so instead.
        throw inputs > perWindow && decision.code === "RATE_LIMITED"
          ? new AppError(
              "RATE_LIMITED",
              `A batch of ${inputs} inputs is more than the key's rate allows in one window (${perWindow}): send smaller batches.`,
            )
          : new AppError(decision.code);
      }
      request.quotaCounted = true;
      request.batchInputs = inputs;
    });
    // A batch refused for its body (not JSON, wrong types, too many inputs, too large) did no work,
    // but it is a request: it counts as one, as a single request with a bad parameter does, so a
    // flood of bad bodies meets the rate like any other. The answer stays the body's 4xx.
    scope.addHook(
      "onError",
      (request: FastifyRequest, _reply: FastifyReply, _error: unknown, done: () => void) => {
        const key = request.apiKey;
        const project = request.project;
        if (!request.batchUncounted || request.limitState !== null || key === null || project === null)
          return done();
        request.batchUncounted = false;
        services.limits.consume(key.id, project.id, services.projects.planOf(project)).then(
          (decision) => {
            request.limitState = decision.state;
            if (decision.allowed) request.quotaCounted = true;
            done();
          },
          () => done(),
        );
      },
    );
    // Callback-style hooks: the only promise of a request here is the limiter's own.
    scope.addHook(
      "onRequest",
      (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
        const key = request.apiKey;
        const project = request.project;
        if (key === null || project === null) return done();
        // A batch is counted per input after its body is validated (chargeBatch).
        if (request.url.startsWith(BATCH_PATH)) {
          // Not counted yet, but refused at the door when nothing is left: a flood of bodies,
          // valid or not, is not read once the key's rate or the project's quota is used up.
          services.limits.peek(key.id, project.id, services.projects.planOf(project)).then(
            (state) => {
              const exhausted =
                state.rate.remaining === 0 ? "rate" : state.quota.remaining === 0 ? "quota" : null;
              if (exhausted === null) {
                request.batchUncounted = true;
                return done();
              }
              request.limitState = state;
              request.retryAfterS = Math.max(1, state[exhausted].resetS);
              done(new AppError(exhausted === "rate" ? "RATE_LIMITED" : "QUOTA_EXCEEDED"));
            },
            (e: unknown) => done(e as Error),
          );
          return;
        }
        const decided = decidedAtTheDoor.get(request.raw);
        const counted = decided
          ? Promise.resolve(decided)
          : services.limits.consume(key.id, project.id, services.projects.planOf(project));
        counted.then(
          (decision) => {
            request.limitState = decision.state;
            // The fast path observed its own decision already.
            if (decided === undefined) services.alerts.observe(key, project, decision);
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
