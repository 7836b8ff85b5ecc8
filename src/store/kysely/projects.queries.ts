import type { ApiKey, KeyScopes, Project } from "../accounts.port.js";
import { type Db, scopesColumn, toApiKey, toProject } from "./rows.js";

/* Projects and API keys (accounts.port.ts), shared by both backends. */

export async function createProject(
  db: Db,
  input: { name: string; description?: string; plan?: string },
): Promise<Project> {
  const row = await db
    .insertInto("projects")
    .values({
      name: input.name,
      description: input.description ?? "",
      plan: input.plan ?? "free",
      created_at: Date.now(),
      settings: "{}",
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toProject(row);
}

export async function findProjectById(db: Db, id: number): Promise<Project | null> {
  const r = await db.selectFrom("projects").selectAll().where("id", "=", id).executeTakeFirst();
  return r ? toProject(r) : null;
}

export async function findProjectByName(db: Db, name: string): Promise<Project | null> {
  const r = await db.selectFrom("projects").selectAll().where("name", "=", name).executeTakeFirst();
  return r ? toProject(r) : null;
}

export async function updateProjectSettings(
  db: Db,
  id: number,
  settings: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable("projects")
    .set({ settings: JSON.stringify(settings) })
    .where("id", "=", id)
    .execute();
}

export async function insertApiKey(
  db: Db,
  input: {
    projectId: number;
    name: string;
    prefix: string;
    hash: string;
    scopes?: KeyScopes;
    expiresAt?: number | null;
  },
): Promise<ApiKey> {
  const row = await db
    .insertInto("api_keys")
    .values({
      project_id: input.projectId,
      name: input.name,
      prefix: input.prefix,
      hash: input.hash,
      created_at: Date.now(),
      last_used_at: null,
      revoked_at: null,
      scopes: scopesColumn(input.scopes),
      expires_at: input.expiresAt ?? null,
      rotated_to: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toApiKey(row);
}

export async function findApiKeyByHash(db: Db, hash: string): Promise<ApiKey | null> {
  const r = await db
    .selectFrom("api_keys")
    .selectAll()
    .where("hash", "=", hash)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return r ? toApiKey(r) : null;
}

export async function listApiKeys(db: Db, projectId: number): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom("api_keys")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("id")
    .execute();
  return rows.map(toApiKey);
}

export async function revokeApiKey(db: Db, id: number, at: number): Promise<void> {
  await db.updateTable("api_keys").set({ revoked_at: at }).where("id", "=", id).execute();
}

export async function touchApiKeys(db: Db, lastUsed: Map<number, number>): Promise<void> {
  for (const [id, at] of lastUsed) {
    await db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", id).execute();
  }
}
