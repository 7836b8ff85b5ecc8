import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { checkNamedScope } from "../../accounts/key-scopes.js";

function strings(v: unknown): string[] {
  if (typeof v === "string") return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** A change feed's comma-separated `networks` / `providers`. */
function commaList(v: unknown): string[] {
  return strings(v).flatMap((s) => s.split(","));
}

/**
 * The networks and providers of a key's scope, for a request that names one explicitly: the
 * `network` / `provider` query parameters (the batch body's fields, the change feed's `networks` /
 * `providers` lists). Outside the scope: 403 NETWORK_NOT_ALLOWED / PROVIDER_NOT_ALLOWED. A request
 * that names none sees only the scope's networks and providers (the key's settings,
 * accounts/key-scopes.ts scopedSettings), as it sees only those its project enabled.
 *
 * A preHandler: it runs once the parameters are canonicalized and a batch body is parsed; an
 * unknown value gets past it to the route's own 400.
 */
export function keyScopeHook(scope: FastifyInstance): void {
  scope.addHook(
    "preHandler",
    (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const scopes = request.apiKey?.scopes;
      if (scopes === undefined || (!scopes.networks && !scopes.providers)) return done();
      const q = (request.query ?? {}) as Record<string, unknown>;
      const b = (typeof request.body === "object" && request.body !== null ? request.body : {}) as Record<
        string,
        unknown
      >;
      const refusal = checkNamedScope(scopes, {
        networks: [...strings(q.network), ...commaList(q.networks), ...strings(b.network)],
        providers: [...strings(q.provider), ...commaList(q.providers), ...strings(b.provider)],
      });
      done(refusal ?? undefined);
    },
  );
}
