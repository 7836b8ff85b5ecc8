import { randomBytes } from "node:crypto";
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
  /**
   * Adds `by` to a counter that exists; null (and nothing added) when it does not: never created,
   * expired, or lost with a Redis that restarted without its data. The caller seeds it, then adds.
   */
  addIfPresent(key: string, by: number, ttlMs: number): Promise<number | null>;
  /** Creates the counter at `value` for `ttlMs` unless it exists; the existing count is kept. */
  seed(key: string, value: number, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * The same counts without a promise, for a counter that lives in this process (memory only):
   * what the hot path of a request uses to skip a microtask turn per step. Absent for Redis.
   */
  readonly now?: {
    get(key: string): number | null;
    addIfPresent(key: string, by: number): number | null;
  };
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
  const addIfPresent = (key: string, by: number): number | null => {
    const e = live(key, clock());
    if (e === undefined) return null;
    e.value += by;
    return e.value;
  };
  return {
    now: {
      get: (key) => live(key, clock())?.value ?? null,
      addIfPresent,
    },
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
    async addIfPresent(key, by) {
      return addIfPresent(key, by);
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

// Each counter has a companion key, `<key>:seed`, naming the seed that created it (a random id):
// a process that counted in memory while Redis was away adds those counts back only to the counter
// it last saw (same seed id), never to one seeded again meanwhile from the usage table, which
// already holds them. A counter restored from Redis' own persistence keeps its seed id.
//
// KEYS: counter, seed id. ARGV: by, counts of an outage, the seed id last seen ("" for none), the
// lifetime in ms, create (1: start a missing counter at 0; 0: answer nil for it).
// Returns nil (missing, not created) or { count, seed id, whether the outage's counts were added }.
const ADD_SCRIPT = `
if ARGV[5] == '0' and redis.call('EXISTS', KEYS[1]) == 0 then return false end
local seed = redis.call('GET', KEYS[2]) or ''
local merged = 1
local by = tonumber(ARGV[1])
if tonumber(ARGV[2]) ~= 0 then
  if seed == ARGV[3] then by = by + tonumber(ARGV[2]) else merged = 0 end
end
local v = redis.call('INCRBY', KEYS[1], by)
-- The lifetime only on the command that created the key, so later ones do not push it back.
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return { v, seed, merged }`;

// KEYS: counter, seed id. ARGV: value, lifetime in ms, a new seed id. Creates the counter unless
// it exists; returns the seed id of the counter that is there now.
const SEED_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
end
return redis.call('GET', KEYS[2]) or ''`;

/** More keys than this in the outage's bookkeeping: the map is emptied and starts again. */
const MAX_TRACKED_KEYS = 50_000;

/**
 * Counters in Redis under `${prefix}:${key}` (shared by every API process), with relative
 * lifetimes so that a process clock that differs from Redis' own does not expire them early.
 *
 * While Redis is unreachable the `fallback` counts instead, so an outage degrades the quota to
 * per-process counting rather than failing requests (as the Redis rate limiters do). The fallback
 * starts from the last count this process had from Redis (not from zero: a project over its quota
 * stays over it), and what it counted is added to Redis with the first write that goes through
 * again, when the counter there is the one it counted on (ADD_SCRIPT). A counter that Redis lost
 * (restarted without persistence) is reported missing by `addIfPresent`: the caller seeds it again
 * from the usage table, which holds the outage's requests, so those are then dropped, not added
 * twice, by this process and by every other.
 */
export function redisCounter(client: Redis, prefix: string, fallback: MonthCounter): MonthCounter {
  const k = (key: string) => `${prefix}:${key}`;
  /** Per key: the last count and seed id this process had from Redis. */
  const known = new Map<string, { count: number; seed: string }>();
  /** What the fallback counted while Redis was away, per key: added to Redis when it returns. */
  const unsent = new Map<string, number>();
  const remember = (key: string, count: number, seed: string) => {
    if (known.size >= MAX_TRACKED_KEYS && !known.has(key)) known.clear();
    known.set(key, { count, seed });
    return count;
  };
  /** Counts `by` in process memory, continuing from the last count Redis gave. */
  const countAside = async (key: string, by: number, ttlMs: number) => {
    await fallback.seed(key, known.get(key)?.count ?? 0, ttlMs);
    unsent.set(key, (unsent.get(key) ?? 0) + by);
    return fallback.add(key, by, ttlMs);
  };
  /** Drops the outage's counts (added to Redis, or held by a new seed), so the fallback starts over. */
  const settle = async (key: string) => {
    if (unsent.delete(key)) await fallback.delete(key);
  };
  const ttl = (ttlMs: number) => Math.max(1, Math.ceil(ttlMs));
  const add = async (key: string, by: number, ttlMs: number, create: boolean): Promise<number | null> => {
    let r: unknown;
    try {
      r = await client.eval(
        ADD_SCRIPT,
        2,
        k(key),
        `${k(key)}:seed`,
        by,
        unsent.get(key) ?? 0,
        known.get(key)?.seed ?? "",
        ttl(ttlMs),
        create ? 1 : 0,
      );
    } catch {
      return countAside(key, by, ttlMs);
    }
    if (r === null) return null;
    const [count, seed] = r as [number, string, number];
    await settle(key);
    return remember(key, Number(count), String(seed));
  };
  return {
    get: async (key) => {
      try {
        const v = await client.get(k(key));
        if (v === null) return null;
        // The outage's counts not yet added back are counted all the same.
        return Number(v) + (unsent.get(key) ?? 0);
      } catch {
        return (await fallback.get(key)) ?? known.get(key)?.count ?? null;
      }
    },
    add: async (key, by, ttlMs) => (await add(key, by, ttlMs, true)) as number,
    addIfPresent: (key, by, ttlMs) => add(key, by, ttlMs, false),
    seed: async (key, value, ttlMs) => {
      try {
        const seed = await client.eval(
          SEED_SCRIPT,
          2,
          k(key),
          `${k(key)}:seed`,
          value,
          ttl(ttlMs),
          randomBytes(8).toString("hex"),
        );
        // The seed is the usage table's count, which holds what the fallback counted meanwhile.
        await settle(key);
        remember(key, value, String(seed));
      } catch {
        await fallback.seed(key, value, ttlMs);
      }
    },
    delete: async (key) => {
      known.delete(key);
      unsent.delete(key);
      await fallback.delete(key);
      await client.del(k(key), `${k(key)}:seed`).catch(() => {});
    },
  };
}
