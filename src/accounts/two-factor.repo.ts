import type { AccountsDb } from "../store/accounts.port.js";

export interface TotpRow {
  secretEnc: string;
  confirmedAt: number | null;
  lastStep: number;
}

/** The two-factor tables (migration 0016-two-factor): TOTP secrets, recovery codes, project rules. */
export class TwoFactorRepo {
  constructor(private readonly db: AccountsDb) {}

  async findTotp(accountId: number): Promise<TotpRow | null> {
    const r = await this.db
      .selectFrom("account_totp")
      .select(["secret_enc", "confirmed_at", "last_step"])
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    if (!r) return null;
    return {
      secretEnc: r.secret_enc,
      confirmedAt: r.confirmed_at === null ? null : Number(r.confirmed_at),
      lastStep: Number(r.last_step),
    };
  }

  /** A new, unconfirmed secret; replaces an unconfirmed one (never a confirmed one). */
  async savePendingTotp(accountId: number, secretEnc: string, now: number): Promise<boolean> {
    await this.db
      .deleteFrom("account_totp")
      .where("account_id", "=", accountId)
      .where("confirmed_at", "is", null)
      .execute();
    const r = await this.db
      .insertInto("account_totp")
      .values({
        account_id: accountId,
        secret_enc: secretEnc,
        created_at: now,
        confirmed_at: null,
        last_step: 0,
      })
      .onConflict((oc) => oc.column("account_id").doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /**
   * Accepts a code's time step once: only when it is later than the last one accepted, so two
   * requests racing with the same code cannot both pass. `confirm` also turns the enrolment on.
   */
  async acceptStep(accountId: number, step: number, now: number, confirm: boolean): Promise<boolean> {
    let q = this.db
      .updateTable("account_totp")
      .set(confirm ? { last_step: step, confirmed_at: now } : { last_step: step })
      .where("account_id", "=", accountId)
      .where("last_step", "<", step);
    q = confirm ? q.where("confirmed_at", "is", null) : q.where("confirmed_at", "is not", null);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async deleteTotp(accountId: number): Promise<void> {
    await this.db.deleteFrom("account_totp").where("account_id", "=", accountId).execute();
    await this.db.deleteFrom("account_recovery_codes").where("account_id", "=", accountId).execute();
  }

  async replaceRecoveryCodes(accountId: number, hashes: readonly string[], now: number): Promise<void> {
    await this.db.deleteFrom("account_recovery_codes").where("account_id", "=", accountId).execute();
    await this.db
      .insertInto("account_recovery_codes")
      .values(hashes.map((h) => ({ account_id: accountId, code_hash: h, created_at: now, used_at: null })))
      .execute();
  }

  /** Uses a recovery code once (under races too: only one request flips used_at). */
  async spendRecoveryCode(accountId: number, hash: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable("account_recovery_codes")
      .set({ used_at: now })
      .where("account_id", "=", accountId)
      .where("code_hash", "=", hash)
      .where("used_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async countRecoveryCodesLeft(accountId: number): Promise<number> {
    const r = await this.db
      .selectFrom("account_recovery_codes")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", accountId)
      .where("used_at", "is", null)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async isRequiredBy(projectId: number): Promise<boolean> {
    const r = await this.db
      .selectFrom("project_two_factor")
      .select("project_id")
      .where("project_id", "=", projectId)
      .executeTakeFirst();
    return r !== undefined;
  }

  async setRequired(projectId: number, required: boolean, by: number, now: number): Promise<void> {
    if (!required) {
      await this.db.deleteFrom("project_two_factor").where("project_id", "=", projectId).execute();
      return;
    }
    await this.db
      .insertInto("project_two_factor")
      .values({ project_id: projectId, required_at: now, required_by: by })
      .onConflict((oc) => oc.column("project_id").doNothing())
      .execute();
  }
}
