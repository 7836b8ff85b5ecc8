import type { RateLimiterRes } from "rate-limiter-flexible";
import { consume, type Limiter, type LimiterBackend } from "./limiter-backend.js";
import type { Plan } from "./plans.js";

export interface LimitState {
  rate: { limit: number; remaining: number; resetS: number; windowS: number };
  quota: { limit: number; used: number; remaining: number; resetS: number; windowS: number };
}

export type LimitDecision =
  | { allowed: true; state: LimitState }
  | { allowed: false; code: "RATE_LIMITED" | "QUOTA_EXCEEDED"; retryAfterS: number; state: LimitState };

/** UTC calendar month of a time: its key, its length and the seconds left in it. */
export function monthOf(now: number): { key: string; startMs: number; endMs: number } {
  const d = new Date(now);
  const startMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const endMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: new Date(startMs).toISOString().slice(0, 7), startMs, endMs };
}

// The quota counter only counts; the plan's quota is compared here, so a project that changes plan
// mid-month keeps its count (a limiter's points are fixed when it is built).
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

export interface ApiLimitsOptions {
  backend: LimiterBackend;
  clock: () => number;
  /** Requests of a project that counted against the quota in a month, from the usage table. */
  loadQuotaUsed: (projectId: number, monthStartMs: number, monthEndMs: number) => Promise<number>;
}

/**
 * The v1 limits: a request rate per API key (the plan's rps over its window) and a monthly quota
 * per project, both counted by rate-limiter-flexible (in memory, or in Redis when configured).
 *
 * The quota counter of a month is seeded from the usage table the first time a process sees the
 * project that month, so a restart does not hand out a fresh quota. Requests refused for the rate or
 * the quota do not consume quota.
 */
export class ApiLimits {
  private readonly rate = new Map<string, Limiter>();
  private readonly quota: Limiter;
  private readonly seeded = new Map<string, Promise<void>>();

  constructor(private readonly opts: ApiLimitsOptions) {
    this.quota = opts.backend.create({ name: "quota", points: UNBOUNDED, durationS: 40 * 86_400 });
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
    // The counter outlives its month by a day, then expires on its own.
    const ttlS = Math.ceil((m.endMs - now) / 1000) + 86_400;
    return { key: `${projectId}:${m.key}`, month: m, ttlS };
  }

  private ensureSeeded(projectId: number, now: number): Promise<void> {
    const { key, month, ttlS } = this.quotaKey(projectId, now);
    let p = this.seeded.get(key);
    if (!p) {
      p = (async () => {
        if ((await this.quota.get(key)) !== null) return;
        const used = await this.opts.loadQuotaUsed(projectId, month.startMs, month.endMs);
        if (used > 0) await this.quota.set(key, used, ttlS);
      })();
      // A failed seed (store down) is retried by the next request instead of being remembered.
      p.catch(() => this.seeded.delete(key));
      this.seeded.set(key, p);
    }
    return p;
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

  /** Counts one request of a key against its rate, then against its project's monthly quota. */
  async consume(keyId: number, projectId: number, plan: Plan): Promise<LimitDecision> {
    const now = this.opts.clock();
    const rate = await consume(this.rateLimiter(plan), String(keyId));
    if (!rate.allowed) {
      const state = {
        rate: this.rateState(plan, rate.res),
        quota: await this.peekQuota(projectId, plan, now),
      };
      return { allowed: false, code: "RATE_LIMITED", retryAfterS: Math.max(1, state.rate.resetS), state };
    }
    await this.ensureSeeded(projectId, now);
    const { key, ttlS } = this.quotaKey(projectId, now);
    const q = await consume(this.quota, key, 1, { customDuration: ttlS });
    const used = q.res.consumedPoints;
    if (used > plan.monthlyQuota) {
      await this.quota.reward(key, 1);
      const state = {
        rate: this.rateState(plan, rate.res),
        quota: this.quotaState(plan, plan.monthlyQuota, now),
      };
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
    await this.ensureSeeded(projectId, now);
    const res = await this.quota.get(this.quotaKey(projectId, now).key);
    return res ? res.consumedPoints : 0;
  }

  /** Forgets a deleted project's counters. */
  async forgetProject(projectId: number): Promise<void> {
    const { key } = this.quotaKey(projectId, this.opts.clock());
    this.seeded.delete(key);
    await this.quota.delete(key);
  }
}

/** A structured-field string (RFC 8941 sf-string) for a policy name. */
function sfString(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-08 and later): one policy
 * item per limit in `RateLimit-Policy` (q = quota, w = window in seconds) and the live counters in
 * `RateLimit` (r = remaining, t = seconds until the window resets).
 */
export function rateLimitHeaders(state: LimitState): Record<string, string> {
  return {
    "ratelimit-policy": `${sfString("rate")};q=${state.rate.limit};w=${state.rate.windowS}, ${sfString("quota")};q=${state.quota.limit};w=${state.quota.windowS}`,
    ratelimit: `${sfString("rate")};r=${state.rate.remaining};t=${state.rate.resetS}, ${sfString("quota")};r=${state.quota.remaining};t=${state.quota.resetS}`,
  };
}
