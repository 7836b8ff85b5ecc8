import type { BlockList } from "node:net";
import { compileIpRules, ipMatches, originMatches } from "./allowlist.js";
import type { ProjectsRepo } from "./projects.repo.js";

export interface CompiledAccess {
  /** null: every address is allowed. */
  ips: BlockList | null;
  /** Empty: every origin is allowed. */
  origins: readonly string[];
}

type AccessVerdict = "ok" | "IP_NOT_ALLOWED" | "ORIGIN_NOT_ALLOWED";

/**
 * Decides a v1 request against its project's allowlists.
 *
 * - IP: with a list, the client address (see createClientIpResolver) must match an entry.
 * - Origin: with a list, a request that carries an Origin header must come from a listed origin.
 *   A request without Origin (a server, curl) passes the origin check: browsers always send Origin
 *   on cross-origin requests, and a non-browser client can write any Origin it likes, so only the IP
 *   list can restrict servers.
 */
export function checkAccess(
  access: CompiledAccess,
  ip: string | null,
  origin: string | undefined,
): AccessVerdict {
  if (access.ips !== null && !ipMatches(access.ips, ip)) return "IP_NOT_ALLOWED";
  if (origin !== undefined && access.origins.length > 0 && !originMatches(access.origins, origin))
    return "ORIGIN_NOT_ALLOWED";
  return "ok";
}

/**
 * The compiled allowlists of each project, cached for `ttlMs` (the same bound as the API-key cache:
 * a change made on another instance applies within it; on this instance `invalidate` applies it at
 * once). The hot path is a map lookup.
 */
export class AccessRulesCache {
  private readonly cache = new Map<number, { value: CompiledAccess; loadedAt: number }>();
  private readonly inflight = new Map<number, Promise<CompiledAccess>>();
  /** Bumped by every invalidation: a load that started before one must not be cached. */
  private generation = 0;

  constructor(
    private readonly repo: ProjectsRepo,
    private readonly clock: () => number,
    /** A number, or a function asked on every read (shorter while the change channel is down). */
    private readonly ttlMs: number | (() => number) = 2_000,
  ) {}

  private ttl(): number {
    return typeof this.ttlMs === "number" ? this.ttlMs : this.ttlMs();
  }

  cached(projectId: number): CompiledAccess | undefined {
    const e = this.cache.get(projectId);
    return e && this.clock() - e.loadedAt < this.ttl() ? e.value : undefined;
  }

  get(projectId: number): Promise<CompiledAccess> {
    const hit = this.cached(projectId);
    if (hit) return Promise.resolve(hit);
    let p = this.inflight.get(projectId);
    if (!p) {
      const gen = this.generation;
      p = this.repo
        .findAccess(projectId)
        .then((a) => {
          const value = { ips: compileIpRules(a.allowedIps), origins: a.allowedOrigins };
          if (gen !== this.generation) return value;
          if (this.cache.size > 50_000) this.cache.clear();
          this.cache.set(projectId, { value, loadedAt: this.clock() });
          return value;
        })
        .finally(() => this.inflight.delete(projectId));
      this.inflight.set(projectId, p);
    }
    return p;
  }

  invalidate(projectId: number): void {
    this.generation++;
    this.cache.delete(projectId);
  }

  clear(): void {
    this.generation++;
    this.cache.clear();
  }
}
