import type { Redis } from "ioredis";

/**
 * A plain counter per key that lives for a given time, for counts that outlast any rate window
 * (the monthly quota). Unlike a rate limiter's store, it never arms a timer: a process-memory
 * counter expires when it is read or swept after its time, and a Redis counter through Redis'
 * own expiry. Node cannot wait longer than 2^31-1 ms (24.8 days) on a timer and fires such a
 * timer after 1 ms instead, so a counter that lives to the end of the month must not rely on one.
 *
 * @example
 * const c = memoryCounter(Date.now);
 * await c.add("7:2026-07", 1, 31 * 86_400_000); // 1
 * await c.get("7:2026-07"); // 1
 */
export interface MonthCounter {
  /** The count, or null when the counter does not exist (never created, deleted or expired). */
  get(key: string): Promise<number | null>;
  /** Adds `by` (may be negative); a new counter starts at 0 and lives `ttlMs`. Returns the new count. */
  add(key: string, by: number, ttlMs: number): Promise<number>;
  /** Creates the counter at `value` for `ttlMs` unless it exists; the existing count is kept. */
  seed(key: string, value: number, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Counters in process memory, expired against `clock` (the application's clock). */
export function memoryCounter(clock: () => number): MonthCounter {
  const entries = new Map<string, { value: number; expiresAt: number }>();
  // Expired counters are dropped in one pass when the earliest expiry has passed: about once a
  // month for quota counters, so the map does not keep the counters of past months.
  let nextSweep = Number.POSITIVE_INFINITY;
  const live = (key: string, now: number) => {
    if (now >= nextSweep) {
      nextSweep = Number.POSITIVE_INFINITY;
      for (const [k, e] of entries) {
        if (e.expiresAt <= now) entries.delete(k);
        else if (e.expiresAt < nextSweep) nextSweep = e.expiresAt;
      }
    }
    return entries.get(key);
  };
  const create = (key: string, value: number, ttlMs: number, now: number) => {
    const expiresAt = now + ttlMs;
    entries.set(key, { value, expiresAt });
    if (expiresAt < nextSweep) nextSweep = expiresAt;
  };
  return {
    async get(key) {
      return live(key, clock())?.value ?? null;
    },
    async add(key, by, ttlMs) {
      const now = clock();
      const e = live(key, now);
      if (e === undefined) {
        create(key, by, ttlMs, now);
        return by;
      }
      e.value += by;
      return e.value;
    },
    async seed(key, value, ttlMs) {
      const now = clock();
      if (live(key, now) === undefined) create(key, value, ttlMs, now);
    },
    async delete(key) {
      entries.delete(key);
    },
  };
}

// INCRBY, and the lifetime only on the command that created the key (PTTL -1: no expiry yet), so
// later requests do not push the expiry back. Atomic: one script.
const ADD_SCRIPT = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;

/**
 * Counters in Redis under `${prefix}:${key}` (shared by every API process), with relative
 * lifetimes so that a process clock that differs from Redis' own does not expire them early.
 * While Redis is unreachable the `fallback` counts instead, so an outage degrades the quota to
 * per-process counting rather than failing requests (as the Redis rate limiters do).
 */
export function redisCounter(client: Redis, prefix: string, fallback: MonthCounter): MonthCounter {
  const k = (key: string) => `${prefix}:${key}`;
  const guarded = <T>(op: () => Promise<T>, instead: () => Promise<T>): Promise<T> =>
    op().catch(() => instead());
  return {
    get: (key) =>
      guarded(
        async () => {
          const v = await client.get(k(key));
          return v === null ? null : Number(v);
        },
        () => fallback.get(key),
      ),
    add: (key, by, ttlMs) =>
      guarded(
        async () => Number(await client.eval(ADD_SCRIPT, 1, k(key), by, Math.max(1, Math.ceil(ttlMs)))),
        () => fallback.add(key, by, ttlMs),
      ),
    seed: (key, value, ttlMs) =>
      guarded(
        async () => {
          await client.set(k(key), value, "PX", Math.max(1, Math.ceil(ttlMs)), "NX");
        },
        () => fallback.seed(key, value, ttlMs),
      ),
    delete: (key) =>
      guarded(
        async () => {
          await client.del(k(key));
          await fallback.delete(key);
        },
        () => fallback.delete(key),
      ),
  };
}
