import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";

/** The counting primitive of every limit: rate-limiter-flexible's fixed-window counters. */
export type Limiter = RateLimiterMemory | RateLimiterRedis;

export interface LimiterSpec {
  /** Distinguishes the counters of one limiter from the others in a shared store. */
  name: string;
  points: number;
  durationS: number;
  blockDurationS?: number;
}

/**
 * Builds limiters in process memory or, when a Redis client is given, in Redis (shared by every API
 * process). A Redis limiter falls back to an in-memory one while Redis is unreachable, so an outage
 * degrades limits to per-process instead of failing requests.
 */
export interface LimiterBackend {
  readonly kind: "memory" | "redis";
  create(spec: LimiterSpec): Limiter;
}

export function memoryBackend(prefix = "omniname"): LimiterBackend {
  return {
    kind: "memory",
    create: (s) =>
      new RateLimiterMemory({
        keyPrefix: `${prefix}:${s.name}`,
        points: s.points,
        duration: s.durationS,
        blockDuration: s.blockDurationS ?? 0,
      }),
  };
}

export function redisBackend(client: Redis, prefix = "omniname"): LimiterBackend {
  return {
    kind: "redis",
    create: (s) =>
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}:${s.name}`,
        points: s.points,
        duration: s.durationS,
        blockDuration: s.blockDurationS ?? 0,
        insuranceLimiter: new RateLimiterMemory({
          keyPrefix: `${prefix}:${s.name}:insurance`,
          points: s.points,
          duration: s.durationS,
          blockDuration: s.blockDurationS ?? 0,
        }),
      }),
  };
}

/**
 * `consume` that returns the library's result either way: it rejects with a RateLimiterRes when the
 * points are spent, and with an Error only on a store failure (which propagates).
 */
export function consume(
  limiter: Limiter,
  key: string,
  points = 1,
  options?: { customDuration?: number },
): Promise<{ allowed: boolean; res: RateLimiterRes }> {
  // One promise on the hot path, not an async frame around the library's.
  return limiter.consume(key, points, options).then(
    (res) => ({ allowed: true, res }),
    (e: unknown) => {
      if (e instanceof RateLimiterRes) return { allowed: false, res: e };
      throw e;
    },
  );
}
