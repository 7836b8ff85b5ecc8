import type { AccountsDb } from "../store/accounts.port.js";
import type { Database } from "../store/schema.js";

/**
 * The password hash of an account that has no password yet (the demo account until its owner sets
 * one, demo-account.ts): not a scrypt hash, so no password ever matches it (verifyPassword refuses
 * a malformed hash).
 */
export const NO_PASSWORD = "none: sign in with the one-time link of the start banner";

export interface Account {
  id: number;
  email: string;
  fullName: string;
  emailVerified: boolean;
  /** False while the account signs in only by link (the demo account before a password is set). */
  hasPassword: boolean;
  createdAt: number;
}

interface AccountWithHash extends Omit<Account, "hasPassword"> {
  passwordHash: string;
  passwordChangedAt: number;
}

interface Session {
  id: string;
  accountId: number;
  createdAt: number;
  expiresAt: number;
  lastSeenAt: number;
}

export const TOKEN_KINDS = {
  invite: "invite",
  verify: "verify",
  reset: "reset",
  login: "login",
  /** The second step of a sign-in whose password was right (two-factor.service.ts). */
  twoFactor: "two-factor",
} as const;
export type TokenKind = (typeof TOKEN_KINDS)[keyof typeof TOKEN_KINDS];

export interface OneTimeToken {
  id: number;
  kind: TokenKind;
  email: string;
  accountId: number | null;
  projectId: number | null;
  role: string | null;
  createdBy: number | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

type AccountRow = Database["accounts"] & { id: number };
type TokenRow = Database["account_tokens"] & { id: number };

function toAccount(r: AccountRow): AccountWithHash {
  return {
    id: Number(r.id),
    email: r.email,
    fullName: r.full_name,
    emailVerified: r.email_verified_at !== null,
    createdAt: Number(r.created_at),
    passwordHash: r.password_hash,
    passwordChangedAt: Number(r.password_changed_at),
  };
}

function toToken(r: TokenRow): OneTimeToken {
  return {
    id: Number(r.id),
    kind: r.kind as TokenKind,
    email: r.email,
    accountId: r.account_id === null ? null : Number(r.account_id),
    projectId: r.project_id === null ? null : Number(r.project_id),
    role: r.role,
    createdBy: r.created_by === null ? null : Number(r.created_by),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    usedAt: r.used_at === null ? null : Number(r.used_at),
  };
}

/** Removes the password hash before an account leaves the service layer. */
export function publicAccount(a: AccountWithHash): Account {
  return {
    id: a.id,
    email: a.email,
    fullName: a.fullName,
    emailVerified: a.emailVerified,
    hasPassword: a.passwordHash !== NO_PASSWORD,
    createdAt: a.createdAt,
  };
}

export function normalizeEmail(email: string): string {
  return email.trim().normalize("NFC").toLowerCase();
}

/** Accounts, sessions and one-time tokens over the store's query builder (both backends). */
export class AccountsRepo {
  constructor(private readonly db: AccountsDb) {}

  async insertAccount(input: {
    email: string;
    fullName: string;
    passwordHash: string;
    now: number;
  }): Promise<AccountWithHash> {
    const row = await this.db
      .insertInto("accounts")
      .values({
        email: input.email,
        full_name: input.fullName,
        password_hash: input.passwordHash,
        email_verified_at: null,
        terms_accepted_at: input.now,
        created_at: input.now,
        password_changed_at: input.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAccount(row as AccountRow);
  }

  /** Whether any console account exists (the demo account is made only in an empty store). */
  async hasAnyAccount(): Promise<boolean> {
    return (await this.db.selectFrom("accounts").select("id").limit(1).executeTakeFirst()) !== undefined;
  }

  async findAccountByEmail(email: string): Promise<AccountWithHash | null> {
    const r = await this.db.selectFrom("accounts").selectAll().where("email", "=", email).executeTakeFirst();
    return r ? toAccount(r as AccountRow) : null;
  }

  async findAccountById(id: number): Promise<AccountWithHash | null> {
    const r = await this.db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toAccount(r as AccountRow) : null;
  }

  async setPasswordHash(id: number, hash: string, now: number): Promise<void> {
    await this.db
      .updateTable("accounts")
      .set({ password_hash: hash, password_changed_at: now })
      .where("id", "=", id)
      .execute();
  }

  async markEmailVerified(id: number, now: number): Promise<void> {
    await this.db
      .updateTable("accounts")
      .set({ email_verified_at: now })
      .where("id", "=", id)
      .where("email_verified_at", "is", null)
      .execute();
  }

  async insertSession(s: Session): Promise<void> {
    await this.db
      .insertInto("sessions")
      .values({
        id: s.id,
        account_id: s.accountId,
        created_at: s.createdAt,
        expires_at: s.expiresAt,
        last_seen_at: s.lastSeenAt,
      })
      .execute();
  }

  async findSession(id: string): Promise<Session | null> {
    const r = await this.db.selectFrom("sessions").selectAll().where("id", "=", id).executeTakeFirst();
    if (!r) return null;
    return {
      id: r.id,
      accountId: Number(r.account_id),
      createdAt: Number(r.created_at),
      expiresAt: Number(r.expires_at),
      lastSeenAt: Number(r.last_seen_at),
    };
  }

  async touchSession(id: string, now: number): Promise<void> {
    await this.db.updateTable("sessions").set({ last_seen_at: now }).where("id", "=", id).execute();
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.deleteFrom("sessions").where("id", "=", id).execute();
  }

  /** Ends every session of an account (password change or reset), optionally but one. */
  async deleteSessionsOf(accountId: number, exceptId?: string): Promise<void> {
    let q = this.db.deleteFrom("sessions").where("account_id", "=", accountId);
    if (exceptId) q = q.where("id", "!=", exceptId);
    await q.execute();
  }

  async deleteExpiredSessions(now: number, idleBefore: number): Promise<number> {
    const res = await this.db
      .deleteFrom("sessions")
      .where((eb) => eb.or([eb("expires_at", "<=", now), eb("last_seen_at", "<", idleBefore)]))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async insertToken(t: Omit<OneTimeToken, "id" | "usedAt"> & { tokenHash: string }): Promise<OneTimeToken> {
    const row = await this.db
      .insertInto("account_tokens")
      .values({
        kind: t.kind,
        token_hash: t.tokenHash,
        email: t.email,
        account_id: t.accountId,
        project_id: t.projectId,
        role: t.role,
        created_by: t.createdBy,
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        used_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toToken(row as TokenRow);
  }

  /** A live (unused, unexpired) token, without using it. */
  async findLiveToken(kind: TokenKind, tokenHash: string, now: number): Promise<OneTimeToken | null> {
    const r = await this.db
      .selectFrom("account_tokens")
      .selectAll()
      .where("token_hash", "=", tokenHash)
      .where("kind", "=", kind)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return r ? toToken(r as TokenRow) : null;
  }

  /**
   * Uses a token: one conditional UPDATE, so two concurrent requests with the same link cannot
   * both succeed (single use holds under races, on both backends).
   */
  async consumeToken(kind: TokenKind, tokenHash: string, now: number): Promise<OneTimeToken | null> {
    const r = await this.db
      .updateTable("account_tokens")
      .set({ used_at: now })
      .where("token_hash", "=", tokenHash)
      .where("kind", "=", kind)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .returningAll()
      .executeTakeFirst();
    return r ? toToken(r as TokenRow) : null;
  }

  /** Retires the other live tokens of a kind for an address (a new reset link voids older ones). */
  async retireTokens(kind: TokenKind, email: string, now: number): Promise<void> {
    await this.db
      .updateTable("account_tokens")
      .set({ used_at: now })
      .where("kind", "=", kind)
      .where("email", "=", email)
      .where("project_id", "is", null)
      .where("used_at", "is", null)
      .execute();
  }

  /** Pending team invitations of a project. */
  async listProjectInvitations(projectId: number, now: number): Promise<OneTimeToken[]> {
    const rows = await this.db
      .selectFrom("account_tokens")
      .selectAll()
      .where("kind", "=", TOKEN_KINDS.invite)
      .where("project_id", "=", projectId)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .orderBy("id")
      .execute();
    return rows.map((r) => toToken(r as TokenRow));
  }

  /** Pending team invitations addressed to an e-mail, in any project. */
  async listInvitationsFor(email: string, now: number): Promise<OneTimeToken[]> {
    const rows = await this.db
      .selectFrom("account_tokens")
      .selectAll()
      .where("kind", "=", TOKEN_KINDS.invite)
      .where("email", "=", email)
      .where("project_id", "is not", null)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .orderBy("id")
      .execute();
    return rows.map((r) => toToken(r as TokenRow));
  }

  async retireToken(id: number, now: number): Promise<void> {
    await this.db.updateTable("account_tokens").set({ used_at: now }).where("id", "=", id).execute();
  }

  async deleteProjectInvitation(projectId: number, id: number): Promise<boolean> {
    const res = await this.db
      .deleteFrom("account_tokens")
      .where("id", "=", id)
      .where("project_id", "=", projectId)
      .where("kind", "=", TOKEN_KINDS.invite)
      .where("used_at", "is", null)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
