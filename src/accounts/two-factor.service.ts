import QRCode from "qrcode";
import { AppError } from "../domain/errors.js";
import type { AccountsDb } from "../store/accounts.port.js";
import { type Account, publicAccount, TOKEN_KINDS } from "./accounts.repo.js";
import type { AccountService } from "./accounts.service.js";
import { recordAudit } from "./audit-log.js";
import type { LoginThrottle } from "./login-throttle.js";
import { PASSWORD_MAX_LENGTH, verifyPassword } from "./password.js";
import { hashToken, isTokenShape } from "./tokens.js";
import {
  decryptTotpSecret,
  encryptTotpSecret,
  hashRecoveryCode,
  newRecoveryCodes,
  newTotpSecret,
  parseRecoveryCode,
  parseTotpCode,
  totpStepOf,
  totpUri,
} from "./two-factor.js";
import { TwoFactorRepo } from "./two-factor.repo.js";

/** How long the second step of a sign-in may take after the password. */
export const TWO_FACTOR_CHALLENGE_MINUTES = 5;

export interface TwoFactorStatus {
  enabled: boolean;
  /** A secret was shown and waits for its first code. */
  pending: boolean;
  recoveryCodesLeft: number;
}

/** The second factor a person gives: a code of the app, or one of the recovery codes. */
export interface SecondFactor {
  code?: string;
  recoveryCode?: string;
}

interface TwoFactorDeps {
  db: AccountsDb;
  accounts: AccountService;
  throttle: LoginThrottle;
  /** Key of the secret's encryption and of the recovery codes' HMAC (the server's pepper). */
  pepper: string;
  clock: () => number;
}

/**
 * Two-factor sign-in: enrolment (a TOTP secret shown once as a QR code, confirmed by a first
 * code, then ten recovery codes shown once), the second step of a sign-in, turning it off, and
 * the project rule that requires it of every member. The secret is stored encrypted and never
 * returned after enrolment; a code's time step is accepted once (replay), and failures count in
 * the sign-in throttle with wrong passwords.
 *
 * @example
 * const { secret } = await twoFactor.setup(account);
 * const { recoveryCodes } = await twoFactor.confirm(account.id, totpCode(secret, Date.now()));
 */
export class TwoFactorService {
  readonly repo: TwoFactorRepo;

  constructor(private readonly d: TwoFactorDeps) {
    this.repo = new TwoFactorRepo(d.db);
  }

  async isEnabled(accountId: number): Promise<boolean> {
    return (await this.repo.findTotp(accountId))?.confirmedAt != null;
  }

  async status(accountId: number): Promise<TwoFactorStatus> {
    const row = await this.repo.findTotp(accountId);
    const enabled = row?.confirmedAt != null;
    return {
      enabled,
      pending: row !== null && !enabled,
      recoveryCodesLeft: enabled ? await this.repo.countRecoveryCodesLeft(accountId) : 0,
    };
  }

  /** A new secret for the authenticator app (an earlier unconfirmed one is replaced). */
  async setup(account: Account): Promise<{ secret: string; otpauthUri: string; qrCode: string }> {
    if (await this.isEnabled(account.id))
      throw new AppError(
        "CONFLICT",
        "Two-factor sign-in is already on. Turn it off first to set up a new app.",
      );
    const secret = newTotpSecret();
    const saved = await this.repo.savePendingTotp(
      account.id,
      encryptTotpSecret(this.d.pepper, account.id, secret),
      this.d.clock(),
    );
    if (!saved) throw new AppError("CONFLICT", "Two-factor sign-in is already on.");
    const otpauthUri = totpUri(secret, account.email);
    const svg = await QRCode.toString(otpauthUri, { type: "svg", margin: 1, errorCorrectionLevel: "M" });
    return { secret, otpauthUri, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}` };
  }

  /** The first code proves the app holds the secret: two-factor sign-in is on, recovery codes shown once. */
  async confirm(accountId: number, codeInput: string): Promise<{ recoveryCodes: string[] }> {
    const code = parseTotpCode(codeInput);
    const row = await this.repo.findTotp(accountId);
    if (row === null || row.confirmedAt !== null)
      throw new AppError("CONFLICT", "There is no set-up waiting for a code: start again.");
    const now = this.d.clock();
    const step = totpStepOf(decryptTotpSecret(this.d.pepper, accountId, row.secretEnc), code, now);
    if (step === null || !(await this.repo.acceptStep(accountId, step, now, true)))
      throw new AppError("TWO_FACTOR_INVALID", "code: wrong or expired. Enter the code your app shows now.");
    return { recoveryCodes: await this.newRecoveryCodes(accountId) };
  }

  private async newRecoveryCodes(accountId: number): Promise<string[]> {
    const codes = newRecoveryCodes();
    const hashes = codes.map((c) => hashRecoveryCode(this.d.pepper, accountId, parseRecoveryCode(c)));
    await this.repo.replaceRecoveryCodes(accountId, hashes, this.d.clock());
    return codes;
  }

  /**
   * Checks a second factor, counting a failure in the sign-in throttle. A code of the app is
   * accepted once per time step; a recovery code once ever. Shapes are checked first: a code of the
   * wrong length is a field error, not an attempt.
   */
  async verify(account: Account, factor: SecondFactor, ip: string): Promise<void> {
    const code = factor.code === undefined ? null : parseTotpCode(factor.code);
    const recovery = factor.recoveryCode === undefined ? null : parseRecoveryCode(factor.recoveryCode);
    if (code === null && recovery === null)
      throw new AppError("MISSING_PARAMETER", 'The field "code" (or "recoveryCode") is required.');
    await this.d.throttle.check(account.email, ip);
    const now = this.d.clock();
    const row = await this.repo.findTotp(account.id);
    let refusal: string | null = null;
    if (row?.confirmedAt == null) refusal = "Two-factor sign-in is not on for this account.";
    else if (code !== null) {
      const step = totpStepOf(decryptTotpSecret(this.d.pepper, account.id, row.secretEnc), code, now);
      if (step === null) refusal = "code: wrong or expired. Enter the code your app shows now.";
      else if (!(await this.repo.acceptStep(account.id, step, now, false)))
        refusal = "code: already used. Wait for the next code in your app.";
    } else if (
      !(await this.repo.spendRecoveryCode(
        account.id,
        hashRecoveryCode(this.d.pepper, account.id, recovery!),
        now,
      ))
    )
      refusal = "recoveryCode: wrong or already used.";
    if (refusal !== null) {
      await this.d.throttle.fail(account.email, ip);
      throw new AppError("TWO_FACTOR_INVALID", refusal);
    }
  }

  /** After the password: the token the second step of the sign-in names. */
  issueChallenge(account: Account): Promise<string> {
    return this.d.accounts.issueTwoFactorChallenge(account, TWO_FACTOR_CHALLENGE_MINUTES * 60_000);
  }

  /** The second step of a sign-in: a session once the factor is accepted; the challenge is then used up. */
  async completeLogin(input: {
    challengeToken: string;
    factor: SecondFactor;
    ip: string;
    previousSession?: string;
  }): Promise<{ account: Account; sessionToken: string }> {
    const repo = this.d.accounts.repo;
    const expired = "The sign-in has expired. Enter your e-mail address and password again.";
    if (!isTokenShape(input.challengeToken)) throw new AppError("TOKEN_INVALID", expired);
    const tokenHash = hashToken(input.challengeToken);
    const t = await repo.findLiveToken(TOKEN_KINDS.twoFactor, tokenHash, this.d.clock());
    const full = t?.accountId ? await repo.findAccountById(t.accountId) : null;
    if (full === null) throw new AppError("TOKEN_INVALID", expired);
    const account = publicAccount(full);
    await this.verify(account, input.factor, input.ip);
    if ((await repo.consumeToken(TOKEN_KINDS.twoFactor, tokenHash, this.d.clock())) === null)
      throw new AppError("TOKEN_INVALID", expired);
    return { account, sessionToken: await this.d.accounts.startSession(account, input.previousSession) };
  }

  /** Turns two-factor sign-in off: the password and a second factor, both throttled. */
  async disable(account: Account, password: string, factor: SecondFactor, ip: string): Promise<void> {
    const full = await this.d.accounts.repo.findAccountById(account.id);
    if (full === null) throw new AppError("UNAUTHENTICATED");
    await this.d.throttle.check(account.email, ip);
    if (password.length > PASSWORD_MAX_LENGTH * 4 || !(await verifyPassword(password, full.passwordHash))) {
      await this.d.throttle.fail(account.email, ip);
      throw new AppError("INVALID_CREDENTIALS", "password: wrong password.");
    }
    await this.verify(account, factor, ip);
    await this.repo.deleteTotp(account.id);
  }

  async isRequiredBy(projectId: number): Promise<boolean> {
    return this.repo.isRequiredBy(projectId);
  }

  /** Whether a member may not see a project: it requires two factors and the member has none. */
  async blocks(projectId: number, accountId: number): Promise<boolean> {
    return (await this.repo.isRequiredBy(projectId)) && !(await this.isEnabled(accountId));
  }

  /** Requiring it needs it of the one who asks, who would otherwise be stopped at once. */
  async setRequired(projectId: number, required: boolean, by: number): Promise<{ required: boolean }> {
    if (required && !(await this.isEnabled(by)))
      throw new AppError(
        "TWO_FACTOR_REQUIRED",
        "Turn on two-factor sign-in for your own account before requiring it of the project.",
      );
    const before = await this.repo.isRequiredBy(projectId);
    await this.d.db.transaction().execute(async (trx) => {
      await new TwoFactorRepo(trx).setRequired(projectId, required, by, this.d.clock());
      await recordAudit(
        trx,
        { projectId, kind: "two_factor.rule", before: { required: before }, after: { required } },
        this.d.clock(),
      );
    });
    return { required };
  }
}
