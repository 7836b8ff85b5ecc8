import { rankingChangesAt } from "../dns/best-domain.js";
import type { RankedDomain } from "../resolution/rank.js";
import { liveOriginOf } from "../resolution/live-names.js";
import type { DomainMap } from "../store/domain-map.port.js";

/** Answers kept at most; the oldest go first. */
const MAX_ENTRIES = 20_000;
/** Body bytes kept at most (about 1 KiB an answer: a few MiB in practice). */
const MAX_BYTES = 32 << 20;
/** Distinct settings contents remembered before the ids start again (a new id is only a miss). */
const MAX_SETTINGS = 10_000;

interface Entry {
  body: Buffer;
  /** The first time the clock alone could change the answer (an expiry, an age step). */
  until: number;
}

/**
 * The v1 answer cache: the serialized body of resolve, deep-resolve and reverse-resolve (without
 * explain, provenance or time travel) under everything the answer is a function of: the endpoint,
 * the input as canonicalized, the filter, the project's settings (by content: the key cache's
 * reloads give new objects with the same settings), the caller's country.
 *
 * Exact, not a TTL cache, as the DNS answer cache (dns/answer-cache.ts): every entry was computed
 * under the map's read version (`DomainMap.readVersion`, read before the answer's reads) and all
 * go when it moves, the same signal that empties the store's read caches (this process's commits
 * at once, another process's within the backend's bound); an entry also goes at the first time the
 * ranking could change by the clock alone (rankingChangesAt). A settings change is a new key: the
 * request carries the settings it is answered under. An answer with a live ENS record is kept until
 * the live answer's own end (fetchedAt + its TTL: until then its cache, ens-live-cache.ts, gives the
 * full path the same answer), or not at all when its TTL is 0. Empty answers (a live wildcard may
 * fill them) are never kept.
 *
 * @example
 * const key = cache.keyOf("resolve", settings, country, q.network, q.provider, q.domain);
 * const hit = cache.get(key, now);
 * const version = cache.version();
 * // … resolve, serialize …
 * cache.put(key, version, ranked, body, now);
 */
export class V1AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** The read version the entries were computed under. */
  private held: number | null = null;
  private readonly settingsIds = new Map<string, number>();
  private readonly idOfObject = new WeakMap<object, number>();
  private nextSettingsId = 1;

  constructor(private readonly store: Pick<DomainMap, "readVersion">) {}

  /** A short, stable id of a settings object's content. */
  private settingsId(settings: Record<string, unknown>): number {
    let id = this.idOfObject.get(settings);
    if (id !== undefined) return id;
    const text = JSON.stringify(settings);
    id = this.settingsIds.get(text);
    if (id === undefined) {
      // Ids are never reused: entries under a forgotten one can no longer be hit, and go.
      if (this.settingsIds.size >= MAX_SETTINGS) {
        this.clear();
        this.settingsIds.clear();
      }
      id = this.nextSettingsId++;
      this.settingsIds.set(text, id);
    }
    this.idOfObject.set(settings, id);
    return id;
  }

  keyOf(
    endpoint: string,
    settings: Record<string, unknown>,
    country: string | null,
    network: string | undefined,
    provider: string | undefined,
    input: string,
  ): string {
    return `${endpoint}\u0000${this.settingsId(settings)}\u0000${country ?? ""}\u0000${network ?? ""}\u0000${provider ?? ""}\u0000${input}`;
  }

  /** The map's read version now (read it before an answer's reads), or null: nothing is kept. */
  version(): number | null {
    return this.store.readVersion();
  }

  /** The kept answer of `key`, when the map has not moved since and the clock has not reached its end. */
  get(key: string, now: number): Buffer | undefined {
    if (this.entries.size === 0) return undefined;
    const v = this.store.readVersion();
    if (v === null || v !== this.held) {
      this.clear();
      return undefined;
    }
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (now >= e.until) {
      this.drop(key, e);
      return undefined;
    }
    return e.body;
  }

  /**
   * Keeps `body`, the answer of `key` computed from `ranked` at `now` under read version `version`,
   * unless the map moved meanwhile or the answer holds a live record or nothing. True: it was kept.
   */
  put(
    key: string,
    version: number | null,
    ranked: readonly RankedDomain[],
    body: Buffer,
    now: number,
  ): boolean {
    if (version === null || ranked.length === 0 || body.length > MAX_BYTES / 64) return false;
    let until = rankingChangesAt(ranked, now);
    for (const r of ranked) {
      const live = liveOriginOf(r.domain);
      if (live === undefined) continue;
      // A live ENS answer is reused by its own cache until fetchedAt + its TTL (ens-live-cache.ts),
      // and the full path gives these very bytes until then: kept no longer. That cache runs on
      // the wall clock; what is left of it is carried over to `now`'s clock.
      const left = Date.parse(live.fetchedAt) + live.cacheTtlMs - Date.now();
      if (!Number.isFinite(left)) return false;
      until = Math.min(until, now + left);
    }
    if (until <= now) return false;
    if (this.store.readVersion() !== version) return false;
    if (this.held !== version) {
      this.clear();
      this.held = version;
    }
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    while (
      this.entries.size > 0 &&
      (this.entries.size >= MAX_ENTRIES || this.bytes + body.length > MAX_BYTES)
    ) {
      const [k, e] = this.entries.entries().next().value as [string, Entry];
      this.drop(k, e);
    }
    this.entries.set(key, { body, until });
    this.bytes += body.length;
    return true;
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.body.length;
  }

  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
    this.held = null;
  }

  /** Answers kept now (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }
}
