import type { Role } from "../../../src/accounts/permissions.js";
import { hashPassword } from "../../../src/accounts/password.js";
import { Agent, type ConsoleTestApp, PASSWORD, uniqueEmail } from "./console-app.js";

let sharedHash: Promise<string> | null = null;

/**
 * A verified account written straight to the store, all sharing one precomputed hash of PASSWORD
 * (scrypt at OWASP cost takes ~0.35 s; the matrix needs many accounts, not many hashes).
 */
export async function createAccount(t: ConsoleTestApp, tag: string): Promise<{ id: number; email: string }> {
  sharedHash ??= hashPassword(PASSWORD);
  const email = uniqueEmail(tag);
  const a = await t.services.accounts.repo.insertAccount({
    email,
    fullName: tag,
    passwordHash: await sharedHash,
    now: t.clock.now,
  });
  await t.services.accounts.repo.markEmailVerified(a.id, t.clock.now);
  return { id: a.id, email };
}

/** A verified account, signed in through the API. */
export async function signedIn(
  t: ConsoleTestApp,
  tag: string,
): Promise<{ id: number; email: string; agent: Agent }> {
  const a = await createAccount(t, tag);
  const agent = await new Agent(t.app).start();
  const res = await agent.post("auth/login", { email: a.email, password: PASSWORD });
  if (res.statusCode !== 200) throw new Error(`login ${tag}: ${res.body}`);
  return { ...a, agent };
}

let projectCounter = 0;

/** A project with the given members, written through the services (no HTTP). */
export async function createProject(
  t: ConsoleTestApp,
  members: Array<{ id: number; role: Role }>,
  plan?: string,
): Promise<{ id: number; name: string }> {
  const name = `project ${++projectCounter} ${Date.now()}`;
  const p = await t.store.projects.createProject({ name, plan });
  for (const m of members) await t.services.projects.repo.addMember(p.id, m.id, m.role, t.clock.now);
  return { id: p.id, name };
}
