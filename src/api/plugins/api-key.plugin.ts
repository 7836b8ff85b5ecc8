import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import type { ApiKeyVerifier, VerifiedKey } from "../../accounts/api-keys.js";
import { AppError } from "../../domain/errors.js";
import { endpointOf } from "./endpoint-name.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's key, set by the api-key hook on every authenticated route; null elsewhere. */
    apiKey: VerifiedKey["key"] | null;
    /** The key's project with its parsed settings (cached with the key for at most the cache TTL). */
    project: VerifiedKey["project"] | null;
  }
  interface FastifyInstance {
    /** The key verifier and its cache: call invalidateKey / invalidateProject after console changes. */
    apiKeys: ApiKeyVerifier;
  }
}

/**
 * Decorates the root instance; call once in buildApp. `request.apiKey` and `request.project`
 * start as null (Fastify wants reference-type decorations initialised per request).
 */
export function decorateApiKeys(app: FastifyInstance, verifier: ApiKeyVerifier): void {
  app.decorate("apiKeys", verifier);
  app.decorateRequest("apiKey", null);
  app.decorateRequest("project", null);
}

/**
 * The authentication hook of a route subtree: adds an onRequest hook to `scope` that requires a
 * valid `api-key` header (401 API_KEY_MISSING / API_KEY_INVALID). Callback style, so that a key
 * found in the cache costs no promise on the hot path.
 */
export function requireApiKey(
  scope: FastifyInstance,
  verifier: ApiKeyVerifier,
  clock: () => number = Date.now,
): void {
  scope.addHook(
    "onRequest",
    (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const raw = request.headers["api-key"];
      if (raw === undefined || raw === "") return done(new AppError("API_KEY_MISSING"));
      // A repeated header arrives joined (`a, b`) or as an array: neither is one valid key, and
      // the caller is told so (a key never holds a comma, so the check costs nothing otherwise).
      if (typeof raw !== "string" || (raw.includes(",") && isRepeated(request.raw.rawHeaders)))
        return done(new AppError("API_KEY_INVALID", REPEATED));
      const cached = verifier.verifyCached(raw);
      if (cached !== undefined) return accept(request, cached, clock, done);
      verifier.verify(raw).then(
        (v) => accept(request, v, clock, done),
        (e: unknown) => done(e as Error),
      );
    },
  );
}

const INVALID =
  "The api-key header does not hold a valid API key (unknown, revoked, or of a deleted project).";
const REPEATED = "The api-key header is sent more than once: send it once, with one key.";

function isRepeated(rawHeaders: readonly string[]): boolean {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === "api-key") n++;
  return n > 1;
}

function accept(
  request: FastifyRequest,
  v: VerifiedKey | null,
  clock: () => number,
  done: HookHandlerDoneFunction,
): void {
  if (v === null) {
    done(new AppError("API_KEY_INVALID", INVALID));
    return;
  }
  // A key without limits (most) costs nothing more: no clock read, no endpoint name.
  const limited = v.key.expiresAt !== null || v.key.scopes.endpoints !== undefined;
  const refusal = limited ? keyRefusal(v.key, endpointOf(request), clock()) : null;
  if (refusal !== null) {
    done(refusal);
    return;
  }
  request.apiKey = v.key;
  request.project = v.project;
  done();
}

/**
 * The key's own limits that do not depend on the parameters: its expiry (checked against the clock
 * on every request, so it holds on every process at the same instant, with no notification) and
 * the endpoints of its scope. Null: the key may go on. The networks and providers are checked once
 * the parameters are parsed (scope.plugin.ts).
 */
export function keyRefusal(key: VerifiedKey["key"], endpoint: string | null, now: number): AppError | null {
  if (key.expiresAt !== null && now >= key.expiresAt) {
    const at = new Date(key.expiresAt).toISOString();
    return new AppError(
      "API_KEY_EXPIRED",
      key.rotated
        ? `The API key was rotated; its overlap ended at ${at}: use the key that replaced it.`
        : `The API key expired at ${at}.`,
    );
  }
  const allowed = key.scopes.endpoints;
  if (allowed !== undefined && endpoint !== null && !allowed.includes(endpoint))
    return new AppError(
      "ENDPOINT_NOT_ALLOWED",
      `This API key may not call ${endpoint}; it may call ${allowed.join(", ")}.`,
    );
  return null;
}
