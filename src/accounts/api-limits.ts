import type { RateLimiterRes } from "rate-limiter-flexible";
import { consume, consumeNow, type Limiter, type LimiterBackend } from "./limiter-backend.js";
import type { MonthCounter } from "./month-counter.js";
import type { Plan } from "./plans.js";

export interface LimitState {
  rate: { limit: number; remaining: number; resetS: number; windowS: number };
  quota: { limit: number; used: number; remaining: number; resetS: number; windowS: number };
}

export type LimitDecision =
  | { allowed: true; state: LimitState }
  | { allowed: false; code: "RATE_LIMITED" | "QUOTA_EXCEEDED"; retryAfterS: number; state: LimitState };

interface Month {
  readonly key: string;
  readonly startMs: number;
  readonly endMs: number;
}

// The month of the last call: every request asks for the current month several times, and
// building it (two Dates and an ISO string) cost more than the rest of the limit check.
let lastMonth: Month | null = null;

/** UTC calendar month of a time: its key, its length and the seconds left in it. */
export function monthOf(now: number): Month {
  const m = lastMonth;
  if (m !== null && now >= m.startMs && now < m.endMs) return m;
  const d = new Date(now);
  const startMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const endMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const month = Object.freeze({ key: new Date(startMs).toISOString().slice(0, 7), startMs, endMs });
  lastMonth = month;
  return month;
}

// The quota counter only counts; the plan's quota is compared here, so a project that changes plan
// mid-month keeps its count. It is a MonthCounter, not a rate limiter: a limiter's memory store
// expires a counter with a timer, and no Node timer can wait until the end of a month.
const DAY_MS = 86_400_000;

interface ApiLimitsOptions {
  backend: LimiterBackend;
  clock: () => number;
  /** Requests of a project that counted against the quota in a month, from the usage table. */
  loadQuotaUsed: (projectId: number, monthStartMs: number, monthEndMs: number) => Promise<number>;
}

/**
 * The v1 limits: a request rate per API key (the plan's rps over its window), counted by
 * rate-limiter-flexible, and a monthly quota per project, counted by a MonthCounter keyed by
 * project and UTC month (both in memory, or in Redis when configured).
 *
 * The quota counter of a month is seeded from the usage table whenever it does not exist (the first
 * request of the month, or after Redis lost its data), so neither a restart nor a Redis without
 * persistence hands out a fresh quota. Requests refused for the rate or the quota do not consume
 * quota.
 */
export class ApiLimits {
  private readonly rate = new Map<string, Limiter>();
  private readonly quota: MonthCounter;
  /** The seeds under way, by quota key. */
  private readonly seeding = new Map<string, Promise<void>>();
  /** The quota key of each project for the month it was built in. */
  private readonly quotaKeys = new Map<number, { month: Month; key: string }>();

  constructor(private readonly opts: ApiLimitsOptions) {
    this.quota = opts.backend.createCounter("quota", opts.clock);
  }

  private rateLimiter(plan: Plan): Limiter {
    const id = `${plan.name}:${plan.rps}:${plan.rateWindowS}`;
    let l = this.rate.get(id);
    if (!l) {
      l = this.opts.backend.create({
        name: `rate:${id}`,
        points: plan.rps * plan.rateWindowS,
        durationS: plan.rateWindowS,
      });
      this.rate.set(id, l);
    }
    return l;
  }

  private quotaKey(projectId: number, now: number) {
    const m = monthOf(now);
    // The counter outlives its month by a day (late requests of the month), then expires.
    const ttlMs = m.endMs - now + DAY_MS;
    let k = this.quotaKeys.get(projectId);
    if (k === undefined || k.month !== m) {
      if (this.quotaKeys.size > 50_000) this.quotaKeys.clear();
      k = { month: m, key: `${projectId}:${m.key}` };
      this.quotaKeys.set(projectId, k);
    }
    return { key: k.key, month: m, ttlMs };
  }

  /**
   * Seeds the project's counter of the month from the usage table unless it exists: the first
   * request of a process that month, and again whenever the counter went missing (a Redis that
   * restarted without its data). Concurrent callers share one seed; a failed one (store down) is
   * tried again by the next request.
   */
  private seed(projectId: number, now: number): Promise<void> {
    const { key, month, ttlMs } = this.quotaKey(projectId, now);
    let p = this.seeding.get(key);
    if (!p) {
      p = (async () => {
        if ((await this.quota.get(key)) !== null) return;
        const used = await this.opts.loadQuotaUsed(projectId, month.startMs, month.endMs);
        // Seeded even at 0: the counter's existence is what says "seeded" to every process.
        await this.quota.seed(key, used, ttlMs);
      })().finally(() => this.seeding.delete(key));
      this.seeding.set(key, p);
    }
    return p;
  }

  /** Adds to the project's counter of the month, seeding it first when it does not exist. */
  private async addQuota(projectId: number, now: number, inputs: number): Promise<number> {
    const { key, ttlMs } = this.quotaKey(projectId, now);
    const used = await this.quota.addIfPresent(key, inputs, ttlMs);
    if (used !== null) return used;
    await this.seed(projectId, now);
    return this.quota.add(key, inputs, ttlMs);
  }

  private rateState(plan: Plan, res: RateLimiterRes | null): LimitState["rate"] {
    const limit = plan.rps * plan.rateWindowS;
    return {
      limit,
      remaining: res ? Math.max(0, limit - res.consumedPoints) : limit,
      resetS: res ? Math.max(0, Math.ceil(res.msBeforeNext / 1000)) : plan.rateWindowS,
      windowS: plan.rateWindowS,
    };
  }

  private quotaState(plan: Plan, used: number, now: number): LimitState["quota"] {
    const m = monthOf(now);
    const u = Math.min(used, plan.monthlyQuota);
    return {
      limit: plan.monthlyQuota,
      used: u,
      remaining: plan.monthlyQuota - u,
      resetS: Math.max(1, Math.ceil((m.endMs - now) / 1000)),
      windowS: Math.round((m.endMs - m.startMs) / 1000),
    };
  }

  /**
   * Counts one request of a key against its rate, then against its project's monthly quota.
   *
   * `inputs` > 1 (a batch call: one point per name or address) is counted all or nothing: a batch
   * that does not fit is refused whole and its points are given back to the rate and the quota, so
   * a refused batch leaves both as they were. A single request refused for the rate stays counted
   * in the rate window, as it always has (a client hammering at its limit stays limited).
   */
  async consume(keyId: number, projectId: number, plan: Plan, inputs = 1): Promise<LimitDecision> {
    const now = this.opts.clock();
    const limiter = this.rateLimiter(plan);
    const rate = await consume(limiter, String(keyId), inputs);
    if (!rate.allowed) {
      if (inputs > 1) await limiter.reward(String(keyId), inputs);
      const state = {
        rate: this.rateState(plan, inputs > 1 ? await limiter.get(String(keyId)) : rate.res),
        quota: await this.peekQuota(projectId, plan, now),
      };
      return { allowed: false, code: "RATE_LIMITED", retryAfterS: Math.max(1, state.rate.resetS), state };
    }
    const { key, ttlMs } = this.quotaKey(projectId, now);
    const used = await this.addQuota(projectId, now, inputs);
    if (used > plan.monthlyQuota) {
      await this.quota.add(key, -inputs, ttlMs);
      if (inputs > 1) await limiter.reward(String(keyId), inputs);
      const state = {
        rate: this.rateState(plan, inputs > 1 ? await limiter.get(String(keyId)) : rate.res),
        quota: this.quotaState(plan, used - inputs, now),
      };
      return { allowed: false, code: "QUOTA_EXCEEDED", retryAfterS: state.quota.resetS, state };
    }
    return {
      allowed: true,
      state: { rate: this.rateState(plan, rate.res), quota: this.quotaState(plan, used, now) },
    };
  }

  /**
   * `consume` of one request, decided without a promise when both counters live in this process
   * (the memory backend) and the project's quota counter of the month exists; undefined, and
   * nothing counted, otherwise (then `consume` decides). The same steps and the same counters as
   * `consume`: the two may serve requests of one key side by side.
   */
  consumeNow(keyId: number, projectId: number, plan: Plan): LimitDecision | undefined {
    const quota = this.quota.now;
    if (quota === undefined) return undefined;
    const now = this.opts.clock();
    const { key } = this.quotaKey(projectId, now);
    const before = quota.get(key);
    // Not seeded yet (the month's first request here): `consume` seeds it from the usage table.
    if (before === null) return undefined;
    const rate = consumeNow(this.rateLimiter(plan), String(keyId));
    if (rate === undefined) return undefined;
    if (!rate.allowed) {
      const state = { rate: this.rateState(plan, rate.res), quota: this.quotaState(plan, before, now) };
      return { allowed: false, code: "RATE_LIMITED", retryAfterS: Math.max(1, state.rate.resetS), state };
    }
    // Present: read above, in the same synchronous turn.
    const used = quota.addIfPresent(key, 1) ?? before + 1;
    if (used > plan.monthlyQuota) {
      quota.addIfPresent(key, -1);
      const state = { rate: this.rateState(plan, rate.res), quota: this.quotaState(plan, used - 1, now) };
      return { allowed: false, code: "QUOTA_EXCEEDED", retryAfterS: state.quota.resetS, state };
    }
    return {
      allowed: true,
      state: { rate: this.rateState(plan, rate.res), quota: this.quotaState(plan, used, now) },
    };
  }

  /** The current state without counting anything (for responses refused before the limits). */
  async peek(keyId: number, projectId: number, plan: Plan): Promise<LimitState> {
    const now = this.opts.clock();
    const res = await this.rateLimiter(plan).get(String(keyId));
    return { rate: this.rateState(plan, res), quota: await this.peekQuota(projectId, plan, now) };
  }

  private async peekQuota(projectId: number, plan: Plan, now: number): Promise<LimitState["quota"]> {
    return this.quotaState(plan, await this.quotaUsed(projectId, now), now);
  }

  /** Requests of the current month that counted against the project's quota. */
  async quotaUsed(projectId: number, now = this.opts.clock()): Promise<number> {
    const { key } = this.quotaKey(projectId, now);
    const used = await this.quota.get(key);
    if (used !== null) return used;
    await this.seed(projectId, now);
    return (await this.quota.get(key)) ?? 0;
  }

  /** Forgets a deleted project's counters. */
  async forgetProject(projectId: number): Promise<void> {
    const { key } = this.quotaKey(projectId, this.opts.clock());
    this.seeding.delete(key);
    await this.quota.delete(key);
  }
}

// The policy names as RFC 8941 sf-strings: constants ("rate" and "quota" need no escaping).
const RATE = '"rate"';
const QUOTA = '"quota"';

/** The last policy field written: it changes only with the plan or the month. */
let lastPolicy = { rq: -1, rw: -1, qq: -1, qw: -1, value: "" };

function policyField(state: LimitState): string {
  const p = lastPolicy;
  if (
    p.rq === state.rate.limit &&
    p.rw === state.rate.windowS &&
    p.qq === state.quota.limit &&
    p.qw === state.quota.windowS
  )
    return p.value;
  const value = `${RATE};q=${state.rate.limit};w=${state.rate.windowS}, ${QUOTA};q=${state.quota.limit};w=${state.quota.windowS}`;
  lastPolicy = {
    rq: state.rate.limit,
    rw: state.rate.windowS,
    qq: state.quota.limit,
    qw: state.quota.windowS,
    value,
  };
  return value;
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-08 and later): one policy
 * item per limit in `RateLimit-Policy` (q = quota, w = window in seconds) and the live counters in
 * `RateLimit` (r = remaining, t = seconds until the window resets).
 */
export function rateLimitHeaders(state: LimitState): Record<string, string> {
  return { "ratelimit-policy": policyField(state), ratelimit: rateLimitField(state) };
}

/** The `RateLimit-Policy` field alone (see rateLimitHeaders). */
export const rateLimitPolicyField = policyField;

/** The `RateLimit` field alone (see rateLimitHeaders). */
export function rateLimitField(state: LimitState): string {
  return `${RATE};r=${state.rate.remaining};t=${state.rate.resetS}, ${QUOTA};r=${state.quota.remaining};t=${state.quota.resetS}`;
}
