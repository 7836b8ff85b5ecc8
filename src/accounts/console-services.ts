import { Redis } from "ioredis";
import type { AppContext } from "../app-context.js";
import { createMailer, type Mailer } from "../mail/mailer.js";
import { channelAwareTtl } from "../store/change-feed.port.js";
import { AccessRulesCache } from "./access-rules.js";
import { AccountService } from "./accounts.service.js";
import { pruneAudit } from "./audit-log.js";
import { createClientIpResolver } from "./allowlist.js";
import { ApiLimits } from "./api-limits.js";
import { type LimiterBackend, memoryBackend, redisBackend } from "./limiter-backend.js";
import { DEFAULT_THROTTLE, LoginThrottle, type ThrottleOptions } from "./login-throttle.js";
import { getPlan } from "./plans.js";
import { ProjectService } from "./projects.service.js";
import { TwoFactorService } from "./two-factor.service.js";
import { loadQuotaUsed, UsageRecorder } from "./usage.js";
import { createUsageAlerts, type UsageAlerts } from "./usage-alerts.js";

export interface ConsoleServicesOptions {
  /** Where limit counters live; default: Redis when REDIS_URL is set, else process memory. */
  backend?: LimiterBackend;
  /** Prefix of every limiter key; default REDIS_KEY_PREFIX (tests use a unique one on a shared Redis). */
  keyPrefix?: string;
  throttle?: Partial<ThrottleOptions>;
  mailer?: Mailer;
  /** How long a project's allowlists are trusted without a lookup. */
  accessTtlMs?: number;
  /** How long `ready()` waits for Redis' first connection (REDIS_URL) before going on without it. */
  redisConnectTimeoutMs?: number;
}

/** Everything the console API and the v1 hooks share, built once per process. */
export interface ConsoleServices {
  accounts: AccountService;
  projects: ProjectService;
  limits: ApiLimits;
  usage: UsageRecorder;
  /** Quota and rate-limit alerts (mails to owners and admins, listed in the console). */
  alerts: UsageAlerts;
  access: AccessRulesCache;
  throttle: LoginThrottle;
  twoFactor: TwoFactorService;
  mailer: Mailer;
  /** The caller's IP, from the socket or, behind TRUSTED_PROXY, from X-Forwarded-For. */
  clientIp: (socketIp: string | undefined, xff: unknown) => string | null;
  /** The context's clock (epoch ms). */
  clock: () => number;
  /** Key of the HMACs that bind CSRF tokens (derived from the server's pepper). */
  secret: string;
  /**
   * Resolves once the limit store is usable: at once in memory; with Redis, when the connection is
   * up or after `redisConnectTimeoutMs` (then limits count in process memory until Redis answers,
   * and a warning says so). The server listens only after this, so the first requests of a fresh
   * process count in Redis like every later one rather than in the fallback counters.
   */
  ready(): Promise<void>;
  /** With REDIS_URL: "up" when Redis answers a PING within 500 ms, else "down"; absent without Redis. */
  redisHealth?: () => Promise<"up" | "down">;
  close(): Promise<void>;
}

export function createConsoleServices(ctx: AppContext, opts: ConsoleServicesOptions = {}): ConsoleServices {
  const { config, store, logger, clock } = ctx;
  getPlan(config, config.defaultPlan); // fails fast on a DEFAULT_PLAN missing from PLANS
  const prefix = opts.keyPrefix ?? config.redisKeyPrefix ?? "omniname";
  let redis: Redis | null = null;
  let backend = opts.backend;
  if (!backend && config.redisUrl) {
    // No offline queue: while Redis is down a limiter call fails at once and its in-memory
    // insurance limiter answers, instead of requests waiting for a reconnect.
    // Reconnects every 50-500 ms (ioredis' default backs off to 2 s): while one process still
    // counts aside, another may already have seeded the counter again (month-counter.ts), and
    // what the first counts in that gap is the only part of an outage the quota can miss.
    redis = new Redis(config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 50, 500),
    });
    // An outage is logged when it begins and when it ends, not at every reconnect attempt.
    let redisDown = false;
    redis.on("error", (e) => {
      if (redisDown) return;
      redisDown = true;
      logger.warn({ err: e }, "redis error (limits fall back to process memory until it returns)");
    });
    redis.on("ready", () => {
      if (!redisDown) return;
      redisDown = false;
      logger.warn("redis answers again: limits and quotas count in Redis");
    });
    backend = redisBackend(redis, prefix);
  }
  const ready = redis ? redisReady(redis, opts.redisConnectTimeoutMs ?? 5_000, logger) : Promise.resolve();
  backend ??= memoryBackend(prefix);

  const mailer =
    opts.mailer ??
    createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, logger });
  const throttle = new LoginThrottle(backend, { ...DEFAULT_THROTTLE, ...opts.throttle });
  const accounts = new AccountService({ store, config, logger, mailer, throttle, clock });
  const twoFactor = new TwoFactorService({
    db: store.accounts,
    accounts,
    throttle,
    pepper: ctx.pepper,
    clock,
  });
  const usage = new UsageRecorder(store.accounts, logger, config.usageFlushMs, (m) =>
    store.projects.touchApiKeys(m),
  );
  const limits = new ApiLimits({
    backend,
    clock,
    loadQuotaUsed: (projectId, from, to) => loadQuotaUsed(store.accounts, projectId, from, to),
  });
  // Real time, not ctx.clock: the TTL bounds how late an allowlist change applies, whatever
  // time the rest of the app is told it is.
  const access = new AccessRulesCache(
    accounts.projects,
    Date.now,
    channelAwareTtl(store.changes, opts.accessTtlMs ?? 2_000),
  );
  const projects = new ProjectService({
    store,
    config,
    clock,
    pepper: ctx.pepper,
    accounts,
    limits,
    usage,
    access,
    ranker: ctx.ranker,
  });
  const alerts = createUsageAlerts({
    db: store.accounts,
    projects: projects.repo,
    backend,
    config,
    clock,
    logger,
    send: (m) => accounts.notify(m),
  });
  usage.start();
  const purge = setInterval(() => {
    accounts.purgeSessions().catch((e: unknown) => logger.warn({ err: e }, "session purge failed"));
    pruneAudit(store.accounts, clock() - config.auditRetentionDays * 86_400_000).catch((e: unknown) =>
      logger.warn({ err: e }, "audit log prune failed"),
    );
  }, 3_600_000);
  purge.unref();

  return {
    accounts,
    projects,
    limits,
    usage,
    alerts,
    access,
    throttle,
    twoFactor,
    mailer,
    clientIp: createClientIpResolver(config.trustedProxy),
    clock,
    secret: ctx.pepper,
    ready: () => ready,
    ...(redis ? { redisHealth: () => pingRedis(redis as Redis, REDIS_PING_TIMEOUT_MS) } : {}),
    async close() {
      clearInterval(purge);
      await usage.close();
      await alerts.drain();
      await accounts.drainMail();
      if (!opts.mailer) mailer.close();
      redis?.disconnect();
    },
  };
}

const REDIS_PING_TIMEOUT_MS = 500;

/** "up" when the client answers PING within `timeoutMs` (without an offline queue it fails at once when disconnected). */
export function pingRedis(redis: Redis, timeoutMs: number): Promise<"up" | "down"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"down">((resolve) => {
    timer = setTimeout(() => resolve("down"), timeoutMs);
  });
  const ping = redis.ping().then(
    (r) => (r === "PONG" ? ("up" as const) : ("down" as const)),
    () => "down" as const,
  );
  return Promise.race([ping, timeout]).finally(() => clearTimeout(timer));
}

/** Waits for a Redis client's first connection, at most `timeoutMs`; never rejects. */
function redisReady(redis: Redis, timeoutMs: number, logger: AppContext["logger"]): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      resolve();
    };
    const timer = setTimeout(() => {
      logger.warn(
        { timeoutMs },
        "redis is not reachable at start-up: rate limits and quotas count in process memory until it is",
      );
      done();
    }, timeoutMs);
    timer.unref();
    redis.once("ready", done);
  });
}
