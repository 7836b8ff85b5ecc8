import {
  type DomainFilter,
  type DomainWithRecords,
  matchesFilter,
  type ReverseRecord,
} from "../domain/types.js";

/** Names whose candidates the read cache keeps; past it the oldest entries go first. */
const CACHE_ENTRIES = 50_000;

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
 * owner, reverse records by address. The backend empties them (`clear`) whenever the map may have
 * changed: its own commits, and another process's (SQLite: the WAL index; PostgreSQL: the change
 * channel). Every cached value is frozen: the same array and objects are returned until the next
 * clear, so callers may key derived values on their identity.
 */
export class DomainReadCache {
  readonly byName = new Map<string, NameEntry>();
  readonly byOwner = new Map<string, NameEntry>();
  readonly reverseBy = new Map<string, readonly ReverseRecord[]>();
  /** Bumped by every clear: an asynchronous load started before a clear must not be stored. */
  private generation = 0;

  /** Changes whenever the cached reads are emptied: a value derived from reads is exact while it stays. */
  get version(): number {
    return this.generation;
  }

  /** `limit`: names (owners, addresses) each map keeps; 0 keeps none (a one-pass export). */
  constructor(private readonly limit = CACHE_ENTRIES) {}

  clear(): void {
    this.generation++;
    this.byName.clear();
    this.byOwner.clear();
    this.reverseBy.clear();
  }

  /** The cached value of `key`, loaded (and the oldest entry evicted past the limit) on a miss. */
  remember<T>(cache: Map<string, T>, key: string, load: () => T): T {
    let hit = cache.get(key);
    if (hit === undefined) {
      hit = load();
      this.put(cache, key, hit);
    }
    return hit;
  }

  /** As `remember`, for a load that awaits: its value is kept only if no clear happened meanwhile. */
  async rememberAsync<T>(cache: Map<string, T>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const gen = this.generation;
    const value = await load();
    if (gen === this.generation) this.put(cache, key, value);
    return value;
  }

  private put<T>(cache: Map<string, T>, key: string, value: T): void {
    if (this.limit <= 0) return;
    if (cache.size >= this.limit) cache.delete(cache.keys().next().value as string);
    cache.set(key, value);
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
