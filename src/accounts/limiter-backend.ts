import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { type MonthCounter, memoryCounter, redisCounter } from "./month-counter.js";

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
 * Builds limiters and counters in process memory or, when a Redis client is given, in Redis (shared
 * by every API process). A Redis limiter falls back to an in-memory one while Redis is unreachable,
 * so an outage degrades limits to per-process instead of failing requests.
 */
export interface LimiterBackend {
  readonly kind: "memory" | "redis";
  create(spec: LimiterSpec): Limiter;
  /** A counter for counts longer than any timer may wait (see MonthCounter), timed by `clock`. */
  createCounter(name: string, clock: () => number): MonthCounter;
}

/** The longest delay a Node timer honours (2^31-1 ms, 24.8 days); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

// rate-limiter-flexible's memory store expires each counter with a setTimeout of the window: a
// window longer than a timer can wait would expire at once. Such counts belong in a MonthCounter.
function checkWindow(s: LimiterSpec): void {
  for (const seconds of [s.durationS, s.blockDurationS ?? 0]) {
    if (seconds * 1000 > MAX_TIMER_MS)
      throw new RangeError(`limiter ${s.name}: a window of ${seconds} s is longer than a timer can wait`);
  }
}

function memoryLimiter(keyPrefix: string, s: LimiterSpec): RateLimiterMemory {
  checkWindow(s);
  return new RateLimiterMemory({
    keyPrefix,
    points: s.points,
    duration: s.durationS,
    blockDuration: s.blockDurationS ?? 0,
  });
}

export function memoryBackend(prefix = "omniname"): LimiterBackend {
  return {
    kind: "memory",
    createCounter: (_name, clock) => memoryCounter(clock),
    create: (s) => memoryLimiter(`${prefix}:${s.name}`, s),
  };
}

export function redisBackend(client: Redis, prefix = "omniname"): LimiterBackend {
  return {
    kind: "redis",
    createCounter: (name, clock) => redisCounter(client, `${prefix}:${name}`, memoryCounter(clock)),
    create: (s) =>
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}:${s.name}`,
        points: s.points,
        duration: s.durationS,
        blockDuration: s.blockDurationS ?? 0,
        insuranceLimiter: memoryLimiter(`${prefix}:${s.name}:insurance`, s),
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

/** The part of rate-limiter-flexible's memory store (its `_memoryStorage`) that consumeNow uses. */
interface MemoryStore {
  incrby(key: string, points: number, durationS: number): RateLimiterRes;
}

/**
 * `consume` without a promise, for a limiter whose counters live in this process: the steps of
 * RateLimiterMemory.consume (rate-limiter-flexible 11) on the same store, so that both paths count
 * into the same window. Undefined, and nothing counted, for any other limiter (Redis: the promise
 * is the round trip), for one that blocks or spreads its points (which the API's do not), or when
 * the library's store is not where this version keeps it (a changed library goes the async way).
 */
export function consumeNow(
  limiter: Limiter,
  key: string,
  points = 1,
): { allowed: boolean; res: RateLimiterRes } | undefined {
  if (!(limiter instanceof RateLimiterMemory) || limiter.blockDuration > 0 || limiter.execEvenly)
    return undefined;
  const store = (limiter as unknown as { _memoryStorage?: Partial<MemoryStore> })._memoryStorage;
  if (typeof store?.incrby !== "function") return undefined;
  const res = store.incrby(limiter.getKey(key), points, limiter.duration);
  // As the library's consume sets it (its typings declare the field read-only).
  (res as { remainingPoints: number }).remainingPoints = Math.max(limiter.points - res.consumedPoints, 0);
  return { allowed: res.consumedPoints <= limiter.points, res };
}
