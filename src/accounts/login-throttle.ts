import { AppError } from "../domain/errors.js";
import { consume, type Limiter, type LimiterBackend } from "./limiter-backend.js";

export interface ThrottleOptions {
  /** Failed logins of one e-mail address before it is blocked (whoever tries). */
  accountFailures: number;
  accountWindowS: number;
  accountBlockS: number;
  /** Failed logins from one IP address before it is blocked (whatever the address). */
  ipFailures: number;
  ipWindowS: number;
  ipBlockS: number;
  /** Account e-mails (verification, reset) sent to one address per hour. */
  mailsPerAddressPerHour: number;
  /** Password strength checks (POST /auth/password-strength) from one IP address per minute. */
  strengthChecksPerIpPerMinute: number;
  /** "Try it" calls (POST /projects/:id/try) of one session per minute. */
  triesPerSessionPerMinute: number;
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  accountFailures: 10,
  accountWindowS: 15 * 60,
  accountBlockS: 15 * 60,
  ipFailures: 50,
  ipWindowS: 60 * 60,
  ipBlockS: 60 * 60,
  mailsPerAddressPerHour: 3,
  strengthChecksPerIpPerMinute: 120,
  triesPerSessionPerMinute: 60,
};

const PER_MINUTE_MESSAGE = {
  strength: "Too many password checks from this address; try again in a minute.",
  try: "Too many tries in a minute from this session; wait a moment and try again.",
} as const;

/**
 * Slows password guessing (OWASP Authentication Cheat Sheet): failures are counted per e-mail
 * address, unknown or not, so the answer for an unknown address is the same; and per client IP,
 * which catches one source spraying many addresses. Once either count is reached, attempts are
 * refused with 429 and Retry-After for the block time, even with the right password. A success
 * clears the account's count.
 *
 * The per-account block lets anyone lock an address out for `accountBlockS`; that is the price of
 * stopping distributed guessing against one account, and it is temporary.
 */
export class LoginThrottle {
  private readonly byAccount: Limiter;
  private readonly byIp: Limiter;
  private readonly mails: Limiter;
  private readonly perMinute: Record<keyof typeof PER_MINUTE_MESSAGE, Limiter>;

  constructor(
    backend: LimiterBackend,
    private readonly o: ThrottleOptions = DEFAULT_THROTTLE,
  ) {
    this.byAccount = backend.create({
      name: "login-account",
      points: o.accountFailures,
      durationS: o.accountWindowS,
    });
    this.byIp = backend.create({ name: "login-ip", points: o.ipFailures, durationS: o.ipWindowS });
    this.mails = backend.create({ name: "mail-address", points: o.mailsPerAddressPerHour, durationS: 3600 });
    this.perMinute = {
      strength: backend.create({
        name: "password-strength-ip",
        points: o.strengthChecksPerIpPerMinute,
        durationS: 60,
      }),
      try: backend.create({ name: "try-session", points: o.triesPerSessionPerMinute, durationS: 60 }),
    };
  }

  /**
   * Counts one call of a per-minute limited console route (password strength per IP, "try it"
   * per session); over the limit: TOO_MANY_ATTEMPTS with Retry-After.
   */
  async hit(kind: keyof typeof PER_MINUTE_MESSAGE, key: string): Promise<void> {
    const { allowed, res } = await consume(this.perMinute[kind], key);
    if (!allowed)
      throw new AppError("TOO_MANY_ATTEMPTS", PER_MINUTE_MESSAGE[kind], {
        details: { retryAfterS: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) },
      });
  }

  /** Throws TOO_MANY_ATTEMPTS while the address or the IP is blocked. */
  async check(email: string, ip: string): Promise<void> {
    const [a, i] = await Promise.all([this.byAccount.get(email), this.byIp.get(ip)]);
    const waits: number[] = [];
    if (a && a.consumedPoints >= this.o.accountFailures) waits.push(a.msBeforeNext);
    if (i && i.consumedPoints >= this.o.ipFailures) waits.push(i.msBeforeNext);
    if (waits.length > 0) {
      throw new AppError("TOO_MANY_ATTEMPTS", undefined, {
        details: { retryAfterS: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) },
      });
    }
  }

  /** Counts a failure; the one that reaches a limit starts the full block time. */
  async fail(email: string, ip: string): Promise<void> {
    const [a, i] = await Promise.all([consume(this.byAccount, email), consume(this.byIp, ip)]);
    if (a.res.consumedPoints >= this.o.accountFailures)
      await this.byAccount.block(email, this.o.accountBlockS);
    if (i.res.consumedPoints >= this.o.ipFailures) await this.byIp.block(ip, this.o.ipBlockS);
  }

  async succeed(email: string): Promise<void> {
    await this.byAccount.delete(email);
  }

  /** Whether another account e-mail may go to this address now (quietly skipped otherwise). */
  async allowMail(email: string): Promise<boolean> {
    return (await consume(this.mails, email)).allowed;
  }
}
