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
}

/**
 * Projects and their API keys: the API's key check reads them on every request (the SQLite
 * backend serves `findApiKeyByHash` from a prepared statement), the console and the operator
 * commands manage them. The one owner of project lookups.
 *
 * @example
 * const project = (await store.findProjectByName("demo")) ?? (await store.createProject({ name: "demo" }));
 * await store.insertApiKey({ projectId: project.id, name: "ci", prefix, hash });
 */
export interface ProjectsStore {
  createProject(input: { name: string; description?: string; plan?: string }): Promise<Project>;
  findProjectById(id: number): Promise<Project | null>;
  findProjectByName(name: string): Promise<Project | null>;
  updateProjectSettings(id: number, settings: Record<string, unknown>): Promise<void>;

  insertApiKey(input: { projectId: number; name: string; prefix: string; hash: string }): Promise<ApiKey>;
  /** The live (not revoked) key with this hash, or null. */
  findApiKeyByHash(hash: string): Promise<ApiKey | null>;
  listApiKeys(projectId: number): Promise<ApiKey[]>;
  revokeApiKey(id: number, at: number): Promise<void>;
  touchApiKeys(lastUsed: Map<number, number>): Promise<void>;
}
