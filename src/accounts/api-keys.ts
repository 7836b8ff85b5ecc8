import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AppContext } from "../app-context.js";
import type { ApiKey, KeyScopes, Project } from "../store/accounts.port.js";
import type { Store } from "../store/store.js";
import { scopedSettings } from "./key-scopes.js";
import { demoPlanOf } from "./plans.js";
import { ProjectsRepo } from "./projects.repo.js";

/**
 * API keys: `on_<8 hex>_<32 base62>`. The hex part is a readable, non-secret prefix shown in the
 * console; the base62 part carries 190 random bits. The server stores only HMAC-SHA-256(pepper,
 * key): a leaked database alone cannot be used to forge or test keys.
 */
export const API_KEY_PATTERN = /^on_([0-9a-f]{8})_([0-9A-Za-z]{32})$/;
/** Keys outside these bounds are refused without a lookup (the demo key may have any form). */
const MIN_KEY_LENGTH = 16;
const MAX_KEY_LENGTH = 256;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniform base62 by rejection sampling: bytes >= 248 (4 × 62) are dropped to avoid modulo bias. */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b >= 248) continue;
      out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A fresh key in plaintext; never stored. */
export function generateApiKey(): { key: string; prefix: string } {
  const hex = randomBytes(4).toString("hex");
  return { key: `on_${hex}_${randomBase62(32)}`, prefix: `on_${hex}` };
}

/** The readable prefix of a key: `on_<hex>` for generated keys, the first 8 characters otherwise. */
export function keyPrefix(key: string): string {
  const m = API_KEY_PATTERN.exec(key);
  return m ? `on_${m[1]}` : `${key.slice(0, 8)}…`;
}

/** HMAC-SHA-256(pepper, key), hex: the only form of a key the store holds. */
export function hashApiKey(pepper: string, key: string): string {
  return createHmac("sha256", pepper).update(key, "utf8").digest("hex");
}

/** Creates a key for a project; the plaintext is returned once and never again. */
export async function createApiKey(
  store: Pick<Store, "projects" | "accounts">,
  pepper: string,
  projectId: number,
  name: string,
  limits: { scopes?: KeyScopes; expiresAt?: number | null } = {},
): Promise<{ key: string; apiKey: ApiKey }> {
  const { key, prefix } = generateApiKey();
  const apiKey = await store.projects.insertApiKey({
    projectId,
    name,
    prefix,
    hash: hashApiKey(pepper, key),
    scopes: limits.scopes,
    expiresAt: limits.expiresAt ?? null,
  });
  return { key, apiKey };
}

/**
 * Creates the "demo" project if absent and, when `config.demoApiKey` is set, registers that key.
 * The project runs on the plan "demo" (local evaluation: high limits) when PLANS has one, else on
 * the default plan; a demo project of an earlier version is moved to it. Idempotent, and safe when
 * two processes start at once. A demo key that an operator revoked stays revoked
 * (`registered: false`).
 */
export async function ensureDemoProject(
  ctx: Pick<AppContext, "store" | "pepper" | "config">,
): Promise<{ project: Project; registered: boolean }> {
  const { store } = ctx;
  const plan = demoPlanOf(ctx.config).name;
  let project = await store.projects.findProjectByName("demo");
  if (project === null) {
    try {
      project = await store.projects.createProject({
        name: "demo",
        description: "Built-in demo project",
        plan,
      });
    } catch (e) {
      project = await store.projects.findProjectByName("demo");
      if (project === null) throw e;
    }
  }
  if (project.plan !== plan) {
    await new ProjectsRepo(store.accounts).setPlan(project.id, plan);
    project = { ...project, plan };
  }
  const demoKey = ctx.config.demoApiKey;
  if (!demoKey) return { project, registered: false };
  const hash = hashApiKey(ctx.pepper, demoKey);
  if ((await store.projects.findApiKeyByHash(hash)) !== null) return { project, registered: true };
  try {
    await store.projects.insertApiKey({
      projectId: project.id,
      name: "demo",
      prefix: keyPrefix(demoKey),
      hash,
    });
    return { project, registered: true };
  } catch {
    // The hash is unique: either another process registered it a moment ago, or it was revoked.
    return { project, registered: (await store.projects.findApiKeyByHash(hash)) !== null };
  }
}

/** What a verified key grants: the key's identity and its project's settings, parsed once. */
export interface VerifiedKey {
  key: {
    id: number;
    projectId: number;
    prefix: string;
    name: string;
    /** The key's own limits (key-scopes.ts); a list left out: everything of its kind. */
    scopes: KeyScopes;
    /** Epoch ms (wall clock) after which the key is refused; null: never. */
    expiresAt: number | null;
    /** It was rotated: `expiresAt` is the end of its overlap. */
    rotated: boolean;
  };
  /** `settings` are the project's with the key's networks and providers applied (scopedSettings). */
  project: { id: number; name: string; plan: string; settings: Record<string, unknown> };
}

interface CacheEntry {
  value: VerifiedKey | null;
  /** When it was loaded: it answers while younger than the TTL (which may shrink while it is cached). */
  loadedAt: number;
}

interface ApiKeyVerifierOptions {
  store: Pick<Store, "projects" | "accounts">;
  pepper: string;
  /** Milliseconds; default the monotonic clock (TTLs must not jump with the wall clock). */
  clock?: () => number;
  /**
   * How long a verified (or unknown) key is trusted without a lookup. Revocation lag is at most
   * this. A function is asked on every read (the TTL shortens while the change channel is down).
   */
  ttlMs?: number | (() => number);
  maxEntries?: number;
}

/**
 * Verifies `api-key` values with an in-process cache of presented key → {key, project, settings}.
 *
 * The cache is keyed by the key string as presented, so a cached request costs one map lookup and
 * no HMAC (the HMAC was ~5 µs of a ~90 µs request). The plaintext keys it holds stay in this
 * process's memory only: never persisted, logged or returned, and gone with the entry. Matching a
 * presented string against the map is exact (no collation, no padding), so the constant-time
 * comparison guards the store lookup only, where the database does the comparing.
 *
 * The TTL bounds how long a revoked key keeps working on this instance (2 s by default);
 * `invalidateKey`/`invalidateProject`/`clear` end it at once (the console calls them on revoke
 * and on settings changes; across instances the TTL is the bound). Unknown keys are cached too,
 * so a client retrying a wrong key does not reach the database on every request; that is safe
 * because a key created later is a different string.
 */
export interface ApiKeyVerifier {
  /** The cached answer, or undefined when the cache cannot answer (then call `verify`). */
  verifyCached(key: string): VerifiedKey | null | undefined;
  verify(key: string): Promise<VerifiedKey | null>;
  invalidateKey(keyId: number): void;
  invalidateProject(projectId: number): void;
  clear(): void;
}

export function createApiKeyVerifier(opts: ApiKeyVerifierOptions): ApiKeyVerifier {
  const { store, pepper } = opts;
  const clock = opts.clock ?? (() => performance.now());
  const ttl = opts.ttlMs ?? 2_000;
  const ttlMs = typeof ttl === "number" ? () => ttl : ttl;
  const maxEntries = opts.maxEntries ?? 10_000;
  const cache = new Map<string, CacheEntry>();
  const inflight = new Map<string, Promise<VerifiedKey | null>>();

  function plausible(key: string): boolean {
    return key.length >= MIN_KEY_LENGTH && key.length <= MAX_KEY_LENGTH;
  }

  function put(key: string, entry: CacheEntry): void {
    // Bounded: random keys from a scanner must not grow the map without end. Dropping everything
    // costs one lookup per live key, which is cheap.
    if (cache.size >= maxEntries) cache.clear();
    cache.set(key, entry);
  }

  /** Bumped by every invalidation: a lookup that started before one must not be cached. */
  let generation = 0;

  async function load(key: string): Promise<VerifiedKey | null> {
    const gen = generation;
    const hash = hashApiKey(pepper, key);
    const found = await store.projects.findApiKeyByHash(hash);
    let value: VerifiedKey | null = null;
    if (found !== null) {
      // The lookup matched under the database's comparison; compare the stored bytes in constant
      // time as well, so a looser comparison (collation, padding) can never admit a near miss.
      const row = await store.accounts
        .selectFrom("api_keys")
        .select("hash")
        .where("id", "=", found.id)
        .executeTakeFirst();
      const stored = Buffer.from(row?.hash ?? "", "hex");
      const project = await store.projects.findProjectById(found.projectId);
      if (project !== null && safeEqualHex(hash, stored)) {
        value = {
          key: {
            id: found.id,
            projectId: found.projectId,
            prefix: found.prefix,
            name: found.name,
            scopes: found.scopes,
            expiresAt: found.expiresAt,
            rotated: found.rotatedTo !== null,
          },
          project: {
            id: project.id,
            name: project.name,
            plan: project.plan,
            settings: scopedSettings(project.settings, found.scopes),
          },
        };
      }
    }
    if (gen === generation) put(key, { value, loadedAt: clock() });
    return value;
  }

  function cached(key: string): VerifiedKey | null | undefined {
    if (!plausible(key)) return null;
    const e = cache.get(key);
    if (e === undefined) return undefined;
    if (clock() - e.loadedAt >= ttlMs()) {
      cache.delete(key);
      return undefined;
    }
    return e.value;
  }

  return {
    verifyCached: cached,

    async verify(key) {
      const hit = cached(key);
      if (hit !== undefined) return hit;
      // Concurrent first requests with the same key share one lookup.
      let p = inflight.get(key);
      if (p === undefined) {
        p = load(key).finally(() => inflight.delete(key));
        inflight.set(key, p);
      }
      return p;
    },

    invalidateKey(keyId) {
      generation++;
      for (const [k, e] of cache) if (e.value?.key.id === keyId) cache.delete(k);
    },

    invalidateProject(projectId) {
      generation++;
      for (const [k, e] of cache) if (e.value?.project.id === projectId) cache.delete(k);
    },

    clear() {
      generation++;
      cache.clear();
    },
  };
}

function safeEqualHex(hex: string, stored: Buffer): boolean {
  const computed = Buffer.from(hex, "hex");
  return computed.length === stored.length && computed.length > 0 && timingSafeEqual(computed, stored);
}
