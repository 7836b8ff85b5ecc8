import type { Store } from "../store/store.js";
import { AccountsRepo, NO_PASSWORD } from "./accounts.repo.js";
import type { AccountService } from "./accounts.service.js";
import { ProjectsRepo } from "./projects.repo.js";

export const DEMO_EMAIL = "demo@omniname.local";
/** The demo account's password hash until its owner sets a password (accounts.repo.ts). */
export { NO_PASSWORD };
export type DemoAccountState =
  /** A fresh one-time sign-in token (the account has no password yet). */
  | { kind: "link"; token: string; accountId: number }
  /** The demo account has a password: it signs in like any account, no link is printed. */
  | { kind: "password-set" }
  /** The store had console accounts but no demo account: none is made. */
  | { kind: "none" };

/**
 * The demo account of `omniname start` with the embedded defaults (docs/console.md, "Demo
 * account"): made once, in a store without any console account, verified, owner of the built-in
 * demo project; on every start while it has no password, a fresh one-time sign-in token.
 */
export async function ensureDemoAccount(
  accounts: AccountService,
  store: Pick<Store, "accounts" | "projects" | "transaction">,
  demoProjectId: number,
  now: number,
): Promise<DemoAccountState> {
  let account = await accounts.repo.findAccountByEmail(DEMO_EMAIL);
  if (account === null) {
    if (await accounts.repo.hasAnyAccount()) return { kind: "none" };
    account = await store.transaction(async (tx) => {
      const repo = new AccountsRepo(tx.accounts);
      const a = await repo.insertAccount({
        email: DEMO_EMAIL,
        fullName: "Demo",
        passwordHash: NO_PASSWORD,
        now,
      });
      await repo.markEmailVerified(a.id, now);
      await new ProjectsRepo(tx.accounts).addMember(demoProjectId, a.id, "owner", now);
      return a;
    });
  }
  if (account.passwordHash !== NO_PASSWORD) return { kind: "password-set" };
  return {
    kind: "link",
    token: await accounts.issueOneTimeLogin(account.id, DEMO_EMAIL),
    accountId: account.id,
  };
}
