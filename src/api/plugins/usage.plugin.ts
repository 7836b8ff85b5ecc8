import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import type { ConsoleServices } from "../../accounts/console-services.js";
import type { V1Extension } from "./v1-extension.js";
import { allowlistHook } from "./allowlist.plugin.js";
import { endpointOf } from "./endpoint-name.js";
import { rateLimitHook } from "./rate-limit.plugin.js";

/**
 * Records every answered v1 request of a known project (status, latency, whether it counted
 * against the quota) and the key's last use, in memory: UsageRecorder writes them in batches.
 */
function usageHook(services: ConsoleServices, clock: () => number): V1Extension {
  return (scope: FastifyInstance) => {
    // Callback style and synchronous: recording is a few map increments, no promise needed.
    scope.addHook(
      "onResponse",
      (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
        const project = request.project;
        if (project === null) return done();
        const endpoint = endpointOf(request) ?? "other";
        services.usage.record({
          projectId: project.id,
          keyId: request.apiKey?.id,
          endpoint,
          status: reply.statusCode,
          latencyMs: reply.elapsedTime,
          quota: request.quotaCounted,
          batchInputs: endpoint.startsWith("batch-") ? request.batchInputs : undefined,
          at: clock(),
        });
        done();
      },
    );
  };
}

/** The three v1 extensions of the console feature, in the order they must run. */
export function consoleV1Hooks(services: ConsoleServices, clock: () => number): V1Extension[] {
  return [allowlistHook(services), rateLimitHook(services), usageHook(services, clock)];
}
