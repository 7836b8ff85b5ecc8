import type { Kysely } from "kysely";
import type { AccountsDatabase } from "./accounts.schema.js";
import type { Database } from "./schema.js";

export interface Project {
  id: number;
  name: string;
  description: string;
  plan: string;
  createdAt: number;
  /** Parsed JSON settings (resolution settings and collision rules). */
  settings: Record<string, unknown>;
}

export interface ApiKey {
  id: number;
  projectId: number;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** What the key may call (accounts/key-scopes.ts); a list left out: everything of its kind. */
  scopes: KeyScopes;
  /** Epoch ms after which the key is refused (API_KEY_EXPIRED); null: never. */
  expiresAt: number | null;
  /** The key that replaced this one in a rotation. */
  rotatedTo: number | null;
}

/** A key's limits: the endpoint names, network and provider wire values it may use. */
export interface KeyScopes {
  endpoints?: string[];
  networks?: string[];
  providers?: string[];
}

/**
 * Projects and their API keys: the API's key check reads them on every request (the SQLite
 * backend serves `findApiKeyByHash` from a prepared statement), the console and the operator
 * commands manage them. The one owner of project lookups.
 *
 * @example
 * const project = (await store.projects.findProjectByName("demo")) ?? (await store.projects.createProject({ name: "demo" }));
 * await store.projects.insertApiKey({ projectId: project.id, name: "ci", prefix, hash });
 */
export interface ProjectsStore {
  createProject(input: { name: string; description?: string; plan?: string }): Promise<Project>;
  findProjectById(id: number): Promise<Project | null>;
  findProjectByName(name: string): Promise<Project | null>;
  updateProjectSettings(id: number, settings: Record<string, unknown>): Promise<void>;

  insertApiKey(input: {
    projectId: number;
    name: string;
    prefix: string;
    hash: string;
    scopes?: KeyScopes;
    expiresAt?: number | null;
  }): Promise<ApiKey>;
  /** The live (not revoked) key with this hash, or null. */
  findApiKeyByHash(hash: string): Promise<ApiKey | null>;
  listApiKeys(projectId: number): Promise<ApiKey[]>;
  revokeApiKey(id: number, at: number): Promise<void>;
  touchApiKeys(lastUsed: Map<number, number>): Promise<void>;
}

/**
 * The accounts feature's own tables (the store's `accounts` part), for its repositories
 * (accounts/accounts.repo.ts, projects.repo.ts, usage.ts): accounts, sessions, tokens,
 * memberships, access rules, usage counters (migration 0003), and the projects and keys they
 * manage. Typed to those tables only: the map, the crawler log and the KYC list are not reachable
 * through it.
 *
 * @example
 * const repo = new AccountsRepo(store.accounts);
 * await store.transaction((tx) => new ProjectsRepo(tx.accounts).addMember(projectId, accountId, "owner", now));
 */
export type AccountsDb = Kysely<AccountsDatabase & Pick<Database, "projects" | "api_keys">>;
