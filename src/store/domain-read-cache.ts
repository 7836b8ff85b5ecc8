import {
  type DomainFilter,
  type DomainWithRecords,
  matchesFilter,
  type ReverseRecord,
} from "../domain/types.js";
import { OldestEntries } from "../domain/oldest-entries.js";
import type { DomainMap } from "./domain-map.port.js";

/** Entries each map of the read cache keeps at most (names, owners, addresses). */
const CACHE_ENTRIES = 50_000;
/**
 * Estimated bytes (entryBytes) the three maps hold together at most: with 128 MiB the API role's
 * RSS after 200,000 resolves over 1,000,000 domains was 415 MB (SQLite) and 360 MB (PostgreSQL),
 * against 309 MB with 1 MiB (bench/HISTORY.md, "Scale"): about 10,000 names of six records each.
 */
const CACHE_BYTES = 128 << 20;

/** A string's estimated heap bytes: V8's header and its characters (one byte each mostly). */
const strBytes = (s: string | null) => (s === null ? 0 : 24 + s.length);

/**
 * A domain's estimated heap bytes: its object, strings, tags and records, times 5 for what hangs
 * on them (V8's objects and maps, the filtered views, the answers serialized from the domain that
 * record-json.ts keeps while it lives). Calibrated on the API role at 1,000,000 domains: with
 * twice the raw sum, 96 MiB of estimate held 227 MB of RSS (bench/HISTORY.md, "Scale").
 */
function domainBytes(d: DomainWithRecords): number {
  let n = 400 + strBytes(d.name) + strBytes(d.tokenId) + strBytes(d.owner) + strBytes(d.contractAddress);
  n += strBytes(d.sld) + strBytes(d.tld) + strBytes(d.resolver) + 32 * (d.tags.length + 1);
  for (const r of d.records)
    n += 64 + strBytes(r.key) + strBytes(r.value) + strBytes(r.nativeKey) + strBytes(r.nativeValue);
  return 5 * n;
}

/** The estimated heap bytes of a cached value: a name's (owner's) domains or reverse records. */
function entryBytes(value: NameEntry | readonly ReverseRecord[]): number {
  let n = 64;
  if ("all" in value) for (const d of value.all) n += domainBytes(d);
  else for (const r of value) n += 160 + strBytes(r.address);
  return n;
}

/** One name's candidates (or one owner's domains), and the same narrowed by each filter asked so far. */
export interface NameEntry {
  all: readonly DomainWithRecords[];
  filtered: Map<string, readonly DomainWithRecords[]> | null;
}

/** Cached domains are shared by every caller until the next commit: nothing may change them. */
function freezeDomain(d: DomainWithRecords): void {
  for (const r of d.records) Object.freeze(r);
  Object.freeze(d.records);
  Object.freeze(d.tags);
  Object.freeze(d);
}

/** One query's domains with their records, frozen: shared by every later caller until the next commit. */
export function frozenEntry(all: DomainWithRecords[]): NameEntry {
  for (const d of all) freezeDomain(d);
  return { all: Object.freeze(all), filtered: null };
}

export function frozenReverse(rows: ReverseRecord[]): readonly ReverseRecord[] {
  for (const r of rows) Object.freeze(r);
  return Object.freeze(rows);
}

/**
 * The exact read caches of the domain map, shared by both backends: candidates by name, domains by
 * owner, reverse records by address. Bounded by CACHE_BYTES of estimated heap (entryBytes) over
 * the three maps together and CACHE_ENTRIES per map, least recently used out first; emptied
 * (`clear`) whenever the map may have changed: the backend's own commits, and another process's
 * (SQLite: the WAL index; PostgreSQL: the change channel). Every cached value is frozen: the same
 * array and objects are returned until the next clear, so callers may key derived values on their
 * identity.
 */
export class DomainReadCache {
  readonly byName = new Map<string, NameEntry>();
  readonly byOwner = new Map<string, NameEntry>();
  readonly reverseBy = new Map<string, readonly ReverseRecord[]>();
  /** Each map's least recently used end (a hit deletes and sets again: the order is recency). */
  private readonly oldest = new Map<Map<string, object>, OldestEntries<string, object>>([
    [this.byName, new OldestEntries<string, object>(this.byName)],
    [this.byOwner, new OldestEntries<string, object>(this.byOwner)],
    [this.reverseBy, new OldestEntries<string, object>(this.reverseBy)],
  ]);
  /** Bumped by every clear: an asynchronous load started before a clear must not be stored. */
  private generation = 0;
  /** Each cached value's estimated bytes, and their sum. */
  private readonly sizes = new WeakMap<object, number>();
  private bytes = 0;

  /** Changes whenever the cached reads are emptied: a value derived from reads is exact while it stays. */
  get version(): number {
    return this.generation;
  }

  /**
   * `limit`: names (owners, addresses) each map keeps, 0 none (a one-pass export); `maxBytes`: the
   * estimated bytes of all three maps.
   */
  constructor(
    private readonly limit = CACHE_ENTRIES,
    private readonly maxBytes = CACHE_BYTES,
  ) {}

  /** The estimated bytes held now (entryBytes). */
  get heldBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.generation++;
    this.byName.clear();
    this.byOwner.clear();
    this.reverseBy.clear();
    this.bytes = 0;
  }

  /** The cached value of `key`, loaded (and the least recently used evicted past the bounds) on a miss. */
  remember<T extends object>(cache: Map<string, T>, key: string, load: () => T): T {
    let hit = this.hit(cache, key);
    if (hit === undefined) {
      hit = load();
      this.put(cache, key, hit);
    }
    return hit;
  }

  /** As `remember`, for a load that awaits: its value is kept only if no clear happened meanwhile. */
  async rememberAsync<T extends object>(
    cache: Map<string, T>,
    key: string,
    load: () => Promise<T>,
  ): Promise<T> {
    const hit = this.hit(cache, key);
    if (hit !== undefined) return hit;
    const gen = this.generation;
    const value = await load();
    if (gen === this.generation) this.put(cache, key, value);
    return value;
  }

  /** A cached value, moved to the most recently used end of its map. */
  private hit<T>(cache: Map<string, T>, key: string): T | undefined {
    const hit = cache.get(key);
    if (hit !== undefined && cache.size > 1) {
      cache.delete(key);
      cache.set(key, hit);
    }
    return hit;
  }

  private put<T extends object>(cache: Map<string, T>, key: string, value: T): void {
    if (this.limit <= 0 || cache.has(key)) return;
    const size = entryBytes(value as NameEntry | readonly ReverseRecord[]);
    if (size > this.maxBytes / 4) return;
    if (cache.size >= this.limit) this.evict(cache);
    while (this.bytes + size > this.maxBytes && this.evictAny()) {}
    this.sizes.set(value, size);
    this.bytes += size;
    cache.set(key, value);
  }

  /** Drops the least recently used entry of `cache`. */
  private evict(cache: Map<string, object>): void {
    const dropped = this.oldest.get(cache)?.drop();
    if (dropped !== undefined) this.bytes -= this.sizes.get(dropped[1]) ?? 0;
  }

  /** Drops the least recently used entry of the largest map; false when all are empty. */
  private evictAny(): boolean {
    const maps = [this.byName, this.byOwner, this.reverseBy] as Map<string, object>[];
    const largest = maps.reduce((a, b) => (b.size > a.size ? b : a));
    if (largest.size === 0) return false;
    this.evict(largest);
    return true;
  }
}

/** The entry's domains narrowed by `filter`, cached on the entry (the same array for the same filter). */
export function narrowed(entry: NameEntry, filter: DomainFilter): readonly DomainWithRecords[] {
  if (!filter.network && !filter.provider) return entry.all;
  const key = `${filter.network ?? ""}|${filter.provider ?? ""}`;
  entry.filtered ??= new Map();
  let hit = entry.filtered.get(key);
  if (hit === undefined) {
    hit = Object.freeze(entry.all.filter((d) => matchesFilter(d, filter)));
    entry.filtered.set(key, hit);
  }
  return hit;
}

/** Several names' cached entries, narrowed, as one array in id order (findDomainsByName's contract). */
export function joinEntries(entries: NameEntry[], filter: DomainFilter): DomainWithRecords[] {
  let out: DomainWithRecords[] = [];
  for (const e of entries) out = out.concat(narrowed(e, filter));
  if (entries.length > 1) out.sort((a, b) => a.id - b.id);
  return out;
}

/** How a backend feeds the cached map (cachedDomainMap). */
export interface CachedReads {
  /**
   * Called before each cached read: empties the cache when the map may have changed since, and
   * says whether the cache answers now (false: the map's own reads answer, uncached).
   */
  fresh(): boolean;
  /**
   * Loads on a miss that answer at once (SQLite's prepared statements); without them a miss is
   * the map's own read, awaited, with no filter.
   */
  load?: {
    byName(name: string): DomainWithRecords[];
    byOwner(address: string): DomainWithRecords[];
    reverse(address: string): ReverseRecord[];
  };
}

/**
 * The domain map with the read cache in front of its three hot reads (by name, by owner, reverse)
 * and its change signal (`readVersion`); every other function is the map's own. For one name the
 * answer is the cached (frozen) array itself until the cache is emptied, so a caller may key
 * derived values (a serialized answer) on its identity; several names: a new array of the cached
 * domains.
 */
export function cachedDomainMap(map: DomainMap, cache: DomainReadCache, reads: CachedReads): DomainMap {
  const load = reads.load;
  const byName = (name: string): NameEntry | Promise<NameEntry> =>
    load
      ? cache.remember(cache.byName, name, () => frozenEntry(load.byName(name)))
      : cache.rememberAsync(cache.byName, name, async () =>
          frozenEntry(await map.findDomainsByName([name], {})),
        );
  return {
    ...map,
    readVersion: () => (reads.fresh() ? cache.version : null),
    async findDomainsByName(names, filter) {
      if (!reads.fresh()) return map.findDomainsByName(names, filter);
      if (names.length === 1) {
        const entry = byName(names[0]);
        return narrowed(entry instanceof Promise ? await entry : entry, filter) as DomainWithRecords[];
      }
      return joinEntries(await Promise.all([...new Set(names)].map(byName)), filter);
    },
    async findDomainsByOwner(address, filter) {
      if (!reads.fresh()) return map.findDomainsByOwner(address, filter);
      const hit = load
        ? cache.remember(cache.byOwner, address, () => frozenEntry(load.byOwner(address)))
        : await cache.rememberAsync(cache.byOwner, address, async () =>
            frozenEntry(await map.findDomainsByOwner(address, {})),
          );
      return narrowed(hit, filter) as DomainWithRecords[];
    },
    async findReverse(address, filter) {
      if (!reads.fresh()) return map.findReverse(address, filter);
      const all = load
        ? cache.remember(cache.reverseBy, address, () => frozenReverse(load.reverse(address)))
        : await cache.rememberAsync(cache.reverseBy, address, async () =>
            frozenReverse(await map.findReverse(address, {})),
          );
      if (!filter.network && !filter.provider) return all as ReverseRecord[];
      return all.filter((r) => matchesFilter(r, filter));
    },
  };
}
