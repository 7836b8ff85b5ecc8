import Fastify, { type FastifyInstance, LogController } from "fastify";
import { createApiKeyVerifier } from "../accounts/api-keys.js";
import { type ConsoleServices, createConsoleServices } from "../accounts/console-services.js";
import type { AppContext } from "../app-context.js";
import { createResolution } from "../resolution/resolution.js";
import { decorateApiKeys } from "./plugins/api-key.plugin.js";
import { clientErrorHandler, frameworkErrors, installErrorHandling } from "./plugins/errors.plugin.js";
import { installOpenApi } from "./plugins/openapi.plugin.js";
import { corsPreflightRoutes } from "./plugins/allowlist.plugin.js";
import {
  installSecurityHeaders,
  noStoreUnder,
  securityHeaderList,
  setHeaders,
} from "./plugins/security-headers.plugin.js";
import { consoleV1Hooks } from "./plugins/usage.plugin.js";
import { consolePages } from "./routes/console/console-pages.routes.js";
import { CONSOLE_PREFIX, consoleRoutes } from "./routes/console/console.routes.js";
import { parseQueryString } from "./query-string.js";
import { createPublicZoneLookup } from "../dns/dns-role.js";
import { dnsQueryRoutes } from "./routes/dns-query.routes.js";
import { healthRoutes } from "./routes/health.routes.js";
import { type V1Extension, v1Routes } from "./routes/v1/v1.routes.js";

export const V1_PREFIX = "/svc/api/v1";

export interface BuildAppOptions {
  /**
   * Extensions of the authenticated v1 scope (allowlists, rate limits, usage): each runs with the
   * encapsulated scope after the api-key hook, before the routes. See V1Extension.
   */
  v1Hooks?: readonly V1Extension[];
  /** Trust X-Forwarded-* (Fastify `trustProxy`): only behind a proxy that sets them. Default false. */
  trustProxy?: boolean | string | string[];
  /** Header with the caller's ISO country code, set by a trusted proxy (geography rules). */
  countryHeader?: string;
  /** How long a verified key is trusted without a lookup (revocation lag). Default 2,000 ms. */
  keyCacheTtlMs?: number;
  /** Largest accepted request body (the API takes none; console routes may). Default 64 KiB. */
  bodyLimit?: number;
  /**
   * The console API (/console/api) and the v1 allowlists, plan limits and usage.
   * `true`: built from ctx and closed with the app; a ConsoleServices: shared or configured by the
   * caller (tests), who closes it. Absent or false: left out, which leaves the v1 API without
   * allowlists, limits and usage: the server role must pass `true`.
   */
  console?: ConsoleServices | boolean;
}

// Secrets never reach the logs, whatever a serializer or a hook decides to log.
const REDACT = [
  'req.headers["api-key"]',
  "req.headers.cookie",
  "req.headers.authorization",
  'res.headers["set-cookie"]',
  'headers["api-key"]',
  "headers.cookie",
  "headers.authorization",
];

/**
 * The HTTP application: health, the OpenAPI document, and the authenticated v1 scope. Errors of
 * every kind are mapped in one place (plugins/errors.plugin.ts). Request logging is off: the hot
 * path logs nothing at info; 4xx are logged at debug and 5xx at error by the error handler.
 *
 * @example
 * const app = await buildApp(ctx);
 * const res = await app.inject({ url: "/svc/api/v1/resolve?domain=alice.wallet", headers: { "api-key": key } });
 */
export async function buildApp(ctx: AppContext, opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  const https = ctx.config.publicUrl.startsWith("https:");
  const headers = securityHeaderList(https);
  const app = Fastify({
    loggerInstance: ctx.logger.child({ component: "api" }, { redact: { paths: REDACT, censor: "***" } }),
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: opts.trustProxy ?? false,
    bodyLimit: opts.bodyLimit ?? 64 * 1024,
    // Shutdown is answered by our own gate (SHUTTING_DOWN in the envelope), not Fastify's bare 503.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQueryString, maxParamLength: 200 },
    // Answered before any hook runs: the security headers (and the console's no-store) by hand.
    frameworkErrors: (error, request, reply) => {
      setHeaders(reply, headers);
      if (request.url.startsWith(`${CONSOLE_PREFIX}/`)) reply.header("cache-control", "no-store");
      frameworkErrors(error, request, reply);
    },
    clientErrorHandler,
  }) as unknown as FastifyInstance;

  await installSecurityHeaders(app, { https });
  installErrorHandling(app);
  installOpenApi(
    app,
    `${V1_PREFIX}/openapi.json`,
    {
      title: "omniname REST API",
      version: "1.0.0",
      description:
        "Read-only resolution of Web3 domains: resolve, deep-resolve, reverse-resolve. Errors: { result: false, error: { code, message } }; codes in docs/errors.md.",
    },
    // The partner API and the probes only: the console API is the console's private contract.
    (url) => url.startsWith(V1_PREFIX) || url === "/healthz" || url === "/readyz",
  );

  // The key cache runs on the monotonic clock, not ctx.clock: its TTL bounds revocation lag in
  // real time, whatever time the ranking is told it is.
  const verifier = createApiKeyVerifier({
    store: ctx.store,
    pepper: ctx.pepper,
    ttlMs: opts.keyCacheTtlMs ?? 2_000,
  });
  decorateApiKeys(app, verifier);

  const consoleServices =
    opts.console === true
      ? createConsoleServices(ctx)
      : typeof opts.console === "object"
        ? opts.console
        : null;
  if (consoleServices) {
    if (opts.console === true) app.addHook("onClose", async () => consoleServices.close());
    noStoreUnder(app, CONSOLE_PREFIX);
    consoleServices.projects.attachKeyCache(verifier);
    corsPreflightRoutes(app, V1_PREFIX);
  }

  healthRoutes(app, ctx.store);
  await app.register(dnsQueryRoutes, { lookup: createPublicZoneLookup(ctx) });
  await app.register(v1Routes, {
    prefix: V1_PREFIX,
    ctx,
    resolution: createResolution({ store: ctx.store, ranker: ctx.ranker }),
    verifier,
    extensions: [
      ...(consoleServices ? consoleV1Hooks(consoleServices, ctx.clock) : []),
      ...(opts.v1Hooks ?? []),
    ],
    rank: { clock: ctx.clock, countryHeader: opts.countryHeader?.toLowerCase() },
  });
  if (consoleServices) {
    await app.register(consoleRoutes, {
      prefix: CONSOLE_PREFIX,
      services: consoleServices,
      config: ctx.config,
    });
    await app.register(consolePages, { config: ctx.config });
  }
  return app;
}
