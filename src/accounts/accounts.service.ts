import type { Logger } from "pino";
import type { Config } from "../config/config.schema.js";
import { AppError } from "../domain/errors.js";
import { inviteMail, resetMail, verifyMail } from "../mail/templates.js";
import type { Mailer, MailMessage } from "../mail/mailer.js";
import type { Store } from "../store/store.js";
import {
  type Account,
  AccountsRepo,
  normalizeEmail,
  type OneTimeToken,
  publicAccount,
  TOKEN_KINDS,
  type TokenKind,
} from "./accounts.repo.js";
import type { LoginThrottle } from "./login-throttle.js";
import {
  checkPasswordPolicy,
  dummyHash,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  verifyPassword,
} from "./password.js";
import { isRole, type Role } from "./permissions.js";
import { joinByInvitation } from "./invited-member.js";
import { ProjectsRepo } from "./projects.repo.js";
import { hashToken, isTokenShape, newToken } from "./tokens.js";

export const VERIFY_TTL_HOURS = 48;
export const RESET_TTL_MINUTES = 60;
/** The demo account's one-time sign-in link (start banner). */
export const ONE_TIME_LOGIN_TTL_MINUTES = 15;
/** Sessions are touched at most this often: a console click is not a database write. */
const TOUCH_EVERY_MS = 60_000;

const EMAIL = /^[^\s@"<>(),;:\\[\]]+@[^\s@"<>(),;:\\[\]]+\.[^\s@"<>(),;:\\[\]]+$/;

/** Trims, lower-cases and checks an e-mail address (RFC 5321 length, a plain addr-spec). */
export function parseEmail(input: string): string {
  const email = normalizeEmail(input);
  if (email.length > 254 || !EMAIL.test(email))
    throw new AppError("INVALID_PARAMETER", "Not a valid e-mail address.");
  return email;
}

interface AccountServiceDeps {
  store: Pick<Store, "accounts" | "projects" | "transaction">;
  config: Config;
  logger: Logger;
  mailer: Mailer;
  throttle: LoginThrottle;
  clock: () => number;
}

export interface SessionInfo {
  account: Account;
  sessionId: string;
}

/**
 * Accounts and their life cycle: invitation, registration, e-mail verification, login and
 * sessions, password change and reset. Answers that could tell whether an address has an account
 * (reset, resend, login failures) are the same either way, and cost the same time.
 */
export class AccountService {
  readonly repo: AccountsRepo;
  readonly projects: ProjectsRepo;
  private readonly pendingMail = new Set<Promise<void>>();

  constructor(private readonly d: AccountServiceDeps) {
    this.repo = new AccountsRepo(d.store.accounts);
    this.projects = new ProjectsRepo(d.store.accounts);
  }

  private link(path: string, token: string): string {
    return `${this.d.config.publicUrl}/console/${path}?token=${token}`;
  }

  /**
   * Sends without making the caller wait: the answer (and its timing) must not depend on whether a
   * mail went out. Failures are logged; `close()` waits for what is in flight.
   */
  notify(message: MailMessage): void {
    this.sendLater(message);
  }

  private sendLater(message: MailMessage): void {
    const p = this.d.mailer
      .send(message)
      .catch((e: unknown) =>
        this.d.logger.error({ err: e, mail: { to: message.to, subject: message.subject } }, "mail failed"),
      )
      .finally(() => this.pendingMail.delete(p));
    this.pendingMail.add(p);
  }

  async drainMail(): Promise<void> {
    while (this.pendingMail.size > 0) await Promise.all([...this.pendingMail]);
  }

  private async issueToken(
    kind: TokenKind,
    email: string,
    ttlMs: number,
    extra: { accountId?: number; projectId?: number; role?: Role; createdBy?: number } = {},
  ): Promise<{ token: string; record: OneTimeToken }> {
    const token = newToken();
    const now = this.d.clock();
    const record = await this.repo.insertToken({
      kind,
      tokenHash: hashToken(token),
      email,
      accountId: extra.accountId ?? null,
      projectId: extra.projectId ?? null,
      role: extra.role ?? null,
      createdBy: extra.createdBy ?? null,
      createdAt: now,
      expiresAt: now + ttlMs,
    });
    return { token, record };
  }

  /**
   * Creates a single-use invitation and e-mails its link. Without a project it only lets the address
   * register (the operator's `omniname admin invite`); with one, registering also joins the project.
   */
  async invite(
    emailInput: string,
    opts: { projectId?: number; projectName?: string; role?: Role; createdBy?: number; wait?: boolean } = {},
  ): Promise<{ link: string; invitation: OneTimeToken }> {
    const email = parseEmail(emailInput);
    const hours = this.d.config.inviteTtlHours;
    const { token, record } = await this.issueToken(TOKEN_KINDS.invite, email, hours * 3_600_000, opts);
    const link = this.link("register", token);
    const project = opts.projectName && opts.role ? { name: opts.projectName, role: opts.role } : undefined;
    const mail = inviteMail(email, link, hours, project);
    if (opts.wait) await this.d.mailer.send(mail);
    else this.sendLater(mail);
    return { link, invitation: record };
  }

  /** What the registration form shows before the invitation is used. */
  async previewInvitation(token: string): Promise<{
    email: string;
    project: { id: number; name: string } | null;
    role: string | null;
    /** Who sent the invitation: null when an operator's CLI did, or the account is gone. */
    invitedBy: { fullName: string; email: string } | null;
  }> {
    const t = isTokenShape(token)
      ? await this.repo.findLiveToken(TOKEN_KINDS.invite, hashToken(token), this.d.clock())
      : null;
    if (t === null) throw new AppError("TOKEN_INVALID");
    const project = t.projectId === null ? null : await this.d.store.projects.findProjectById(t.projectId);
    const inviter = t.createdBy === null ? null : await this.repo.findAccountById(t.createdBy);
    return {
      email: t.email,
      project: project && { id: project.id, name: project.name },
      role: t.role,
      invitedBy: inviter && { fullName: inviter.fullName, email: inviter.email },
    };
  }

  async register(input: {
    invitationToken: string;
    fullName: string;
    email: string;
    password: string;
    acceptTerms: boolean;
  }): Promise<Account> {
    if (input.acceptTerms !== true) throw new AppError("TERMS_NOT_ACCEPTED");
    const email = parseEmail(input.email);
    const fullName = input.fullName.trim().normalize("NFC");
    if (fullName.length === 0)
      throw new AppError("MISSING_PARAMETER", 'The field "fullName" must not be empty.');
    if (/\p{Cc}/u.test(fullName))
      throw new AppError("INVALID_PARAMETER", 'The field "fullName" has control characters.');
    checkPasswordPolicy(input.password, email);
    if (!isTokenShape(input.invitationToken)) throw new AppError("TOKEN_INVALID");
    const tokenHash = hashToken(input.invitationToken);
    const peek = await this.repo.findLiveToken(TOKEN_KINDS.invite, tokenHash, this.d.clock());
    if (peek === null) throw new AppError("TOKEN_INVALID");
    if (peek.email !== email)
      throw new AppError("TOKEN_INVALID", "This invitation was sent to another e-mail address.");
    if ((await this.repo.findAccountByEmail(email)) !== null)
      throw new AppError("CONFLICT", "An account with this e-mail address exists: sign in instead.");
    // The slow hash runs before the transaction, so the transaction holds no lock for 0.3 s.
    const passwordHash = await hashPassword(input.password);
    const account = await this.d.store.transaction(async (tx) => {
      const repo = new AccountsRepo(tx.accounts);
      const now = this.d.clock();
      // Single use under races: only one request flips used_at.
      const used = await repo.consumeToken(TOKEN_KINDS.invite, tokenHash, now);
      if (used === null) throw new AppError("TOKEN_INVALID");
      let created: Awaited<ReturnType<AccountsRepo["insertAccount"]>>;
      try {
        created = await repo.insertAccount({ email, fullName, passwordHash, now });
      } catch (e) {
        throw new AppError("CONFLICT", "An account with this e-mail address exists: sign in instead.", {
          cause: e,
        });
      }
      await joinByInvitation(tx.accounts, used, created, now);
      return created;
    });
    await this.sendVerification(account.id, email);
    return publicAccount(account);
  }

  private async sendVerification(accountId: number, email: string): Promise<void> {
    const { token } = await this.issueToken(TOKEN_KINDS.verify, email, VERIFY_TTL_HOURS * 3_600_000, {
      accountId,
    });
    this.sendLater(verifyMail(email, this.link("verify-email", token), VERIFY_TTL_HOURS));
  }

  /**
   * Marks the address verified. Team invitations still pending for it are accepted at the same
   * time: they were addressed to this mailbox, which the link has just proven.
   */
  async verifyEmail(token: string): Promise<Account> {
    if (!isTokenShape(token)) throw new AppError("TOKEN_INVALID");
    const now = this.d.clock();
    const t = await this.repo.consumeToken(TOKEN_KINDS.verify, hashToken(token), now);
    if (t === null || t.accountId === null) throw new AppError("TOKEN_INVALID");
    await this.repo.markEmailVerified(t.accountId, now);
    const account = await this.repo.findAccountById(t.accountId);
    if (account === null) throw new AppError("TOKEN_INVALID");
    for (const inv of await this.repo.listInvitationsFor(account.email, now)) {
      if (inv.projectId !== null && isRole(inv.role))
        await this.projects.addMember(inv.projectId, account.id, inv.role, now);
      await this.repo.retireToken(inv.id, now);
    }
    return publicAccount(account);
  }

  /** Same answer whether or not the address has an unverified account. */
  async resendVerification(emailInput: string): Promise<void> {
    const email = normalizeEmail(emailInput);
    const account = await this.repo.findAccountByEmail(email);
    if (account === null || account.emailVerified) return;
    if (!(await this.d.throttle.allowMail(email))) return;
    await this.sendVerification(account.id, email);
  }

  private newSession(accountId: number): Promise<string> {
    const token = newToken();
    const now = this.d.clock();
    return this.repo
      .insertSession({
        id: hashToken(token),
        accountId,
        createdAt: now,
        expiresAt: now + this.d.config.sessionTtlHours * 3_600_000,
        lastSeenAt: now,
      })
      .then(() => token);
  }

  /**
   * Checks the password (throttled; an unknown address costs the same time). The failure count is
   * cleared only when the sign-in completes (`startSession`), so a second factor is throttled with it.
   */
  async checkPassword(input: { email: string; password: string; ip: string }): Promise<Account> {
    const email = normalizeEmail(input.email);
    await this.d.throttle.check(email, input.ip);
    const account = email.length <= 254 ? await this.repo.findAccountByEmail(email) : null;
    const okLength = input.password.length <= PASSWORD_MAX_LENGTH * 4;
    // An unknown address still pays for one scrypt, so timing does not tell it apart.
    const matches =
      okLength && (await verifyPassword(input.password, account?.passwordHash ?? (await dummyHash())));
    if (account === null || !matches) {
      await this.d.throttle.fail(email, input.ip);
      throw new AppError("INVALID_CREDENTIALS");
    }
    if (!account.emailVerified) throw new AppError("EMAIL_NOT_VERIFIED");
    return publicAccount(account);
  }

  /**
   * Completes a sign-in: clears the failure count and opens a new session (a new token every time:
   * the session id rotates at login, and a session cookie the browser already had is ended).
   */
  async startSession(account: Account, previousSession?: string): Promise<string> {
    await this.d.throttle.succeed(account.email);
    if (previousSession && isTokenShape(previousSession))
      await this.repo.deleteSession(hashToken(previousSession));
    return this.newSession(account.id);
  }

  /** A single-use token for the second step of a sign-in (the password was right). */
  async issueTwoFactorChallenge(account: Account, ttlMs: number): Promise<string> {
    await this.repo.retireTokens(TOKEN_KINDS.twoFactor, account.email, this.d.clock());
    return (await this.issueToken(TOKEN_KINDS.twoFactor, account.email, ttlMs, { accountId: account.id }))
      .token;
  }

  /**
   * A one-time sign-in link's token for an account (the demo account's start banner): 15 minutes,
   * single use, stored hashed like every token; a new one voids the older ones.
   */
  async issueOneTimeLogin(accountId: number, email: string): Promise<string> {
    await this.repo.retireTokens(TOKEN_KINDS.login, email, this.d.clock());
    const { token } = await this.issueToken(TOKEN_KINDS.login, email, ONE_TIME_LOGIN_TTL_MINUTES * 60_000, {
      accountId,
    });
    return token;
  }

  /** Uses a one-time sign-in token: a new session, or TOKEN_INVALID (used, expired, unknown). */
  async oneTimeLogin(token: string): Promise<{ account: Account; sessionToken: string }> {
    const t = isTokenShape(token)
      ? await this.repo.consumeToken(TOKEN_KINDS.login, hashToken(token), this.d.clock())
      : null;
    const account = t?.accountId ? await this.repo.findAccountById(t.accountId) : null;
    if (account === null) throw new AppError("TOKEN_INVALID");
    return { account: publicAccount(account), sessionToken: await this.newSession(account.id) };
  }

  /** The stored id of a session token (its hash). */
  sessionIdOf(token: string): string {
    return hashToken(token);
  }

  /** The session a cookie names, if it is live; expired ones are deleted on sight. */
  async authenticate(sessionToken: string | undefined): Promise<SessionInfo | null> {
    if (!sessionToken || !isTokenShape(sessionToken)) return null;
    const id = hashToken(sessionToken);
    const s = await this.repo.findSession(id);
    if (s === null) return null;
    const now = this.d.clock();
    if (s.expiresAt <= now || s.lastSeenAt + this.d.config.sessionIdleHours * 3_600_000 <= now) {
      await this.repo.deleteSession(id);
      return null;
    }
    const account = await this.repo.findAccountById(s.accountId);
    if (account === null) return null;
    if (now - s.lastSeenAt > TOUCH_EVERY_MS) await this.repo.touchSession(id, now);
    return { account: publicAccount(account), sessionId: id };
  }

  async logout(sessionId: string): Promise<void> {
    await this.repo.deleteSession(sessionId);
  }

  /** Changes the password, ends every other session and rotates the current one. */
  async changePassword(accountId: number, current: string, next: string, ip: string): Promise<string> {
    const account = await this.repo.findAccountById(accountId);
    if (account === null) throw new AppError("UNAUTHENTICATED");
    await this.d.throttle.check(account.email, ip);
    if (current.length > PASSWORD_MAX_LENGTH * 4 || !(await verifyPassword(current, account.passwordHash))) {
      await this.d.throttle.fail(account.email, ip);
      throw new AppError("INVALID_CREDENTIALS", "The current password is wrong.");
    }
    checkPasswordPolicy(next, account.email);
    await this.repo.setPasswordHash(accountId, await hashPassword(next), this.d.clock());
    await this.repo.deleteSessionsOf(accountId);
    return this.newSession(accountId);
  }

  /** Same answer, and no mail, for an unknown address; a new link voids the older ones. */
  async requestPasswordReset(emailInput: string): Promise<void> {
    const email = normalizeEmail(emailInput);
    if (email.length > 254) return;
    const account = await this.repo.findAccountByEmail(email);
    if (account === null) return;
    if (!(await this.d.throttle.allowMail(email))) return;
    const now = this.d.clock();
    await this.repo.retireTokens(TOKEN_KINDS.reset, email, now);
    const { token } = await this.issueToken(TOKEN_KINDS.reset, email, RESET_TTL_MINUTES * 60_000, {
      accountId: account.id,
    });
    this.sendLater(resetMail(email, this.link("reset-password", token), RESET_TTL_MINUTES));
  }

  /** Sets a new password from a reset link, ends every session, and counts as e-mail proof. */
  async resetPassword(token: string, password: string): Promise<void> {
    if (!isTokenShape(token)) throw new AppError("TOKEN_INVALID");
    const tokenHash = hashToken(token);
    const peek = await this.repo.findLiveToken(TOKEN_KINDS.reset, tokenHash, this.d.clock());
    if (peek === null || peek.accountId === null) throw new AppError("TOKEN_INVALID");
    checkPasswordPolicy(password, peek.email);
    const hash = await hashPassword(password);
    const now = this.d.clock();
    const t = await this.repo.consumeToken(TOKEN_KINDS.reset, tokenHash, now);
    if (t === null || t.accountId === null) throw new AppError("TOKEN_INVALID");
    await this.repo.setPasswordHash(t.accountId, hash, now);
    await this.repo.markEmailVerified(t.accountId, now);
    await this.repo.deleteSessionsOf(t.accountId);
    await this.d.throttle.succeed(t.email);
  }

  /** Removes sessions past their lifetime or idle limit (run periodically). */
  async purgeSessions(): Promise<number> {
    const now = this.d.clock();
    return this.repo.deleteExpiredSessions(now, now - this.d.config.sessionIdleHours * 3_600_000);
  }
}
