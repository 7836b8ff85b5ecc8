import Fastify, { type FastifyInstance, LogController } from "fastify";
import { Registry } from "prom-client";
import { createChangeHub } from "./changes/change-hub.js";
import { webhookAddressPolicy } from "../accounts/webhook-address.js";
import { type ApiWorkers, createApiWorkers } from "../workers/api-workers.js";
import { WebhookService } from "./webhooks/webhook-service.js";
import { createApiKeyVerifier } from "../accounts/api-keys.js";
import type { ConsoleServices } from "../accounts/console-services.js";
import type { AppContext } from "../app-context.js";
import { LOG_REDACTION } from "../logger.js";
import { lazyRequestLogger } from "./plugins/lazy-request-logger.js";
import type { EnsLive } from "../resolution/ens-live.js";
import { createResolution } from "../resolution/resolution.js";
import { createDomainHistory } from "../crawler/domain-history.js";
import { decorateApiKeys } from "./plugins/api-key.plugin.js";
import { createApiMetrics, installApiMetrics } from "./plugins/api-metrics.plugin.js";
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
import { consoleSpa, defaultConsoleDistDir } from "./routes/console/console-spa.routes.js";
import { CONSOLE_PREFIX, consoleRoutes } from "./routes/console/console.routes.js";
import { parseQueryString } from "./query-string.js";
import { createPublicZoneLookup } from "../dns/dns-role.js";
import { readTlsCredentials } from "../config/tls-credentials.js";
import { httpsServerOptions, reloadCertificatesOnChange } from "./https-server.js";
import { dnsQueryRoutes } from "./routes/dns-query.routes.js";
import { healthRoutes } from "./routes/health.routes.js";
import { subscribeAccountCaches } from "./change-subscriber.js";
import { channelAwareTtl } from "../store/change-feed.port.js";
import { v1Routes } from "./routes/v1/v1.routes.js";
import { V1AnswerCache } from "./v1-answer-cache.js";
import { V1FastPath } from "./v1-fast-path.js";
import type { V1Extension } from "./plugins/v1-extension.js";

export const V1_PREFIX = "/svc/api/v1";

/** The routes outside v1 that the OpenAPI document describes (/status is added by the server role). */
const DOCUMENTED_PROBES = new Set(["/healthz", "/readyz", "/status", "/dns-query"]);

export interface BuildAppOptions {
  /**
   * Further extensions of the authenticated v1 scope, after the console feature's own (allowlists,
   * rate limits, usage): each runs with the encapsulated scope after the api-key hook, before the
   * routes. See V1Extension.
   */
  v1Hooks?: readonly V1Extension[];
  /** The built web console (index.html, assets/) served at /console/. Default: PACKAGE_ROOT/web/dist. */
  consoleDistDir?: string;
  /** Trust X-Forwarded-* (Fastify `trustProxy`): only behind a proxy that sets them. Default false. */
  trustProxy?: boolean | string | string[];
  /** Header with the caller's ISO country code, set by a trusted proxy (geography rules). */
  countryHeader?: string;
  /**
   * How long a verified key is trusted without a lookup. Default 2,000 ms; with a change channel
   * (PostgreSQL) revocations apply on notification, and while it is down the TTL is at most 1 s.
   */
  keyCacheTtlMs?: number;
  /** Largest accepted request body (the API takes none; console routes may). Default 64 KiB. */
  bodyLimit?: number;
  /**
   * The console feature's services. The v1 scope always runs their allowlists, plan limits and
   * usage hooks: there is no app that serves v1 without them. Created by the caller, who closes
   * them (or passes `closeServices`).
   */
  services: ConsoleServices;
  /** Close `services` when the app closes (the server role, which built them for this app). Default false. */
  closeServices?: boolean;
  /**
   * The Prometheus registry the API's metrics go on: the one GET /metrics serves (the server role
   * passes the crawler's, so both are scraped together). Default: a registry of the app's own.
   */
  metricsRegistry?: Registry;
  /** Serve the console API (/console/api) and its pages. Default true. */
  console?: boolean;
  /**
   * The process's background work (workers/api-workers.ts), built and started by the caller: the
   * app runs none of it, and uses its webhook deliverer only for the console's test deliveries.
   */
  workers?: ApiWorkers;
  /** ENS names answered by their resolver, not the index (resolution/ens-live.ts); absent: the index alone. */
  ensLive?: EnsLive;
}

/**
 * The HTTP application: health, the OpenAPI document, and the authenticated v1 scope. Errors of
 * every kind are mapped in one place (plugins/errors.plugin.ts). Request logging is off: the hot
 * path logs nothing at info; 4xx are logged at debug and 5xx at error by the error handler.
 *
 * @example
 * const services = createConsoleServices(ctx);
 * const app = await buildApp(ctx, { services, closeServices: true });
 * const res = await app.inject({ url: "/svc/api/v1/resolve?domain=alice.wallet", headers: { "api-key": key } });
 */
export async function buildApp(ctx: AppContext, opts: BuildAppOptions): Promise<FastifyInstance> {
  const https = ctx.config.publicUrl.startsWith("https:");
  const headers = securityHeaderList(https);
  const tls = readTlsCredentials(ctx.config);
  const app = Fastify({
    ...httpsServerOptions(ctx.config, tls),
    // Secrets never reach the logs, whatever a serializer or a hook decides to log: the child keeps
    // the process's redaction (a child's own `redact` would replace it).
    loggerInstance: ctx.logger.child({ component: "api" }, { redact: LOG_REDACTION }),
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, childOpts) => lazyRequestLogger(logger, bindings, childOpts),
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

  if (tls !== null) reloadCertificatesOnChange(app, ctx.config);
  await installSecurityHeaders(app, { https });
  installErrorHandling(app, { storePing: () => ctx.store.ping() });
  // The API's metrics and the change feed's (GET /metrics serves the registry the caller passes).
  const metricsRegistry = opts.metricsRegistry ?? new Registry();
  const metrics = createApiMetrics(metricsRegistry, () => opts.services.usage.flushLagSeconds());
  installApiMetrics(app, metrics);
  installOpenApi(
    app,
    `${V1_PREFIX}/openapi.json`,
    {
      title: "omniname REST API",
      version: "1.0.0",
      description:
        "Read-only resolution of Web3 domains: resolve, deep-resolve, reverse-resolve, their batch calls, and DNS-over-HTTPS. Errors: { result: false, error: { code, message } }; codes in docs/errors.md.",
    },
    // The partner API and the probes only: the console API is the console's private contract.
    (url) => url.startsWith(V1_PREFIX) || DOCUMENTED_PROBES.has(url),
  );

  // The key cache runs on the monotonic clock, not ctx.clock: its TTL bounds revocation lag in
  // real time, whatever time the ranking is told it is.
  const verifier = createApiKeyVerifier({
    store: ctx.store,
    pepper: ctx.pepper,
    ttlMs: channelAwareTtl(ctx.store.changes, opts.keyCacheTtlMs ?? 2_000),
  });
  decorateApiKeys(app, verifier);

  const services = opts.services;
  if (ctx.store.changes) {
    const off = subscribeAccountCaches(ctx.store.changes, { verifier, access: services.access });
    app.addHook("onClose", async () => off());
  }
  if (opts.closeServices) app.addHook("onClose", async () => services.close());
  // Listen only once the limit store is connected (or given up on), see ConsoleServices.ready.
  app.addHook("onReady", () => services.ready());
  services.projects.attachKeyCache(verifier);
  corsPreflightRoutes(app, V1_PREFIX);
  const serveConsole = opts.console ?? true;
  if (serveConsole) noStoreUnder(app, CONSOLE_PREFIX);

  const resolution = createResolution({
    store: ctx.store.domainMap,
    ranker: ctx.ranker,
    live: opts.ensLive,
    history: createDomainHistory(ctx.store),
  });
  const ensLive = opts.ensLive;
  if (ensLive) app.addHook("onClose", async () => ensLive.close());
  const hub = await createChangeHub({
    store: ctx.store,
    registry: metricsRegistry,
    retentionMs: ctx.config.changesRetentionDays * 86_400_000,
    clock: ctx.clock,
  });
  app.addHook("onClose", async () => hub.close());
  const answers = new V1AnswerCache(ctx.store.domainMap);
  const countryHeader = opts.countryHeader?.toLowerCase();
  // In front of Fastify for repeated plain v1 GETs (v1-fast-path.ts); not when a deployment adds
  // its own v1 hooks, which only Fastify runs.
  let fastPath: V1FastPath | undefined;
  if ((opts.v1Hooks ?? []).length === 0) {
    fastPath = new V1FastPath({
      prefix: V1_PREFIX,
      verifier,
      services,
      answers,
      metrics,
      clock: ctx.clock,
      countryHeader,
      securityHeaders: headers,
      closing: () => app.closing(),
    });
    fastPath.install(app.server);
  }
  const policy = webhookAddressPolicy(ctx.config);
  // The console's test deliveries go through the process's deliverer when the caller runs one
  // (start: workers/api-workers.ts); otherwise through one of the app's own, never started.
  const worker = opts.workers?.webhooks ?? createApiWorkers(ctx, services, { deliver: false }).webhooks;
  const webhooks = new WebhookService({ ctx, policy, worker });
  healthRoutes(app, ctx.store, { redisHealth: services.redisHealth });
  await app.register(dnsQueryRoutes, { lookup: createPublicZoneLookup(ctx), isPublic: true });
  await app.register(v1Routes, {
    prefix: V1_PREFIX,
    ctx,
    resolution,
    verifier,
    extensions: [...consoleV1Hooks(services, ctx.clock), ...(opts.v1Hooks ?? [])],
    rank: { clock: ctx.clock, countryHeader },
    metrics,
    answers,
    fastPath,
    changes: {
      hub,
      store: ctx.store.changeLog,
      verifier,
      heartbeatMs: ctx.config.changesHeartbeatMs,
      maxClients: ctx.config.changesMaxClients,
      stallMs: ctx.config.changesStallMs,
      clock: ctx.clock,
    },
  });
  if (serveConsole) {
    await app.register(consoleRoutes, {
      prefix: CONSOLE_PREFIX,
      services,
      config: ctx.config,
      resolution,
      webhooks,
    });
    await app.register(consoleSpa, {
      distDir: opts.consoleDistDir ?? defaultConsoleDistDir(),
      config: ctx.config,
    });
  }
  return app;
}
