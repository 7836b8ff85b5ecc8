import { OldestEntries } from "../domain/oldest-entries.js";
import { type AnswerReport, answerQuery, type Transport } from "./query-handler.js";
import type { AnswerStamp } from "./store-zone-lookup.js";
import type { ZoneLookup } from "./zone.js";

/** A lookup that says when its answers may have changed (store-zone-lookup.ts; static zones never do). */
export interface StampedZoneLookup extends ZoneLookup {
  answerStamp(): AnswerStamp | null;
}

/** Answers kept; past it the oldest go first (a flood of distinct names only cycles the cache). */
export const ANSWER_CACHE_ENTRIES = 50_000;
/** The largest query whose answer is kept (a query with EDNS options is still under it). */
const MAX_CACHED_QUERY = 512;

interface Entry {
  /** The query's bytes after its ID, the question name in lower case: what the key's hash stands for. */
  query: Buffer;
  transport: Transport;
  /** The answer to the first query of this key: its ID and question name are the only bytes to patch. */
  answer: Buffer;
  /** End of the question name in both packets (the name starts at offset 12). */
  nameEnd: number;
  stamp: AnswerStamp;
  validUntil: number;
}

/** Mixed into a key's hash, so that the same query over UDP and over TCP has two keys. */
const TRANSPORT_SEED: Record<Transport, number> = { udp: 0x811c9dc5, tcp: 0x050c5d1f, doh: 0x1b873593 };
const FNV_PRIME = 0x01000193;

export interface AnswerCacheOptions {
  lookup: StampedZoneLookup;
  clock: () => number;
  maxEntries?: number;
}

/**
 * The authoritative server's answer cache: the wire answer of a query, kept under the query's bytes
 * with the ID left out and the question name in lower case, so a repeated query is answered by
 * copying bytes (its ID and its own question name, 0x20 case included, written into the copy).
 * The map's key is a 32-bit hash of those bytes, computed without allocating; an entry answers a
 * query only when its kept bytes equal the query's (two queries of one hash share the slot, the
 * newest kept).
 *
 * Exact, not a TTL cache: an entry is used only while the map's read version and the zones' version
 * (`StoreZoneLookup.answerStamp`, read before the answer was computed) are unchanged, and before
 * the first time the ranking could change by the clock alone (an expiry, an age step). So a cached
 * answer is never staler than an uncached one: both follow the store's read caches (this process's
 * commits at once; another process's within the backend's bound, docs/operations.md). Failed
 * lookups (SERVFAIL) and malformed queries are never kept.
 *
 * @example
 * const cache = new AnswerCache({ lookup, clock: Date.now });
 * const hit = cache.get(packet, "udp") ?? (await cache.answer(packet, "udp"));
 */
export class AnswerCache {
  /** Keyed by the hash of the query (`hashOf`); an entry serves a query only if its bytes match. */
  private readonly entries = new Map<number, Entry>();
  private readonly oldest = new OldestEntries(this.entries);
  private readonly max: number;
  hits = 0;
  misses = 0;

  constructor(private readonly opts: AnswerCacheOptions) {
    this.max = opts.maxEntries ?? ANSWER_CACHE_ENTRIES;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached answer to this query with its ID and name case, or null (not cached or no longer exact). */
  get(packet: Buffer, transport: Transport): Buffer | null {
    const nameEnd = hashOf(packet, transport);
    if (nameEnd === 0) return null;
    const entry = this.entries.get(lastHash);
    if (entry === undefined || !sameQuery(entry, packet, transport)) return null;
    const stamp = this.opts.lookup.answerStamp();
    if (
      stamp === null ||
      stamp.map !== entry.stamp.map ||
      stamp.zones !== entry.stamp.zones ||
      this.opts.clock() >= entry.validUntil
    ) {
      this.entries.delete(lastHash);
      return null;
    }
    this.hits++;
    const out = Buffer.allocUnsafe(entry.answer.length);
    out.set(entry.answer);
    out[0] = packet[0];
    out[1] = packet[1];
    for (let i = 12; i < nameEnd; i++) out[i] = packet[i];
    return out;
  }

  /** Computes the answer (answerQuery) and keeps it when it may be reused. */
  async answer(packet: Buffer, transport: Transport): Promise<Buffer | null> {
    this.misses++;
    const stamp = this.opts.lookup.answerStamp();
    const report: AnswerReport = { validUntil: Number.POSITIVE_INFINITY, cacheable: false };
    const answer = await answerQuery(packet, this.opts.lookup, transport, report);
    if (answer === null || stamp === null || !report.cacheable || this.max <= 0) return answer;
    const nameEnd = hashOf(packet, transport);
    // The answer must echo the question at offset 12 (it does unless the packet was cut short).
    if (nameEnd === 0 || answer.length < nameEnd || !sameNameIgnoringCase(packet, answer, nameEnd))
      return answer;
    const query = Buffer.from(packet.subarray(2));
    for (let i = 10; i < nameEnd - 2; i++) query[i] = lower(query[i]);
    // Another query of the same hash (rare) gives way: one entry a hash, the newest.
    this.entries.delete(lastHash);
    if (this.entries.size >= this.max) this.oldest.drop();
    this.entries.set(lastHash, { query, transport, answer, nameEnd, stamp, validUntil: report.validUntil });
    return answer;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The hash `hashOf` computed last (it returns the end of the question name). */
let lastHash = 0;

/**
 * The key of a query: FNV-1a over the transport, then every byte but the ID, with the question
 * name's ASCII letters lowered, left in `lastHash`. Returns the end of the question name, or 0
 * for what is not a plain one-question query (those take the full path).
 */
function hashOf(packet: Buffer, transport: Transport): number {
  const len = packet.length;
  if (len < 17 || len > MAX_CACHED_QUERY) return 0;
  // QR=0, opcode QUERY, one question.
  if ((packet[2] & 0xf8) !== 0 || packet[4] !== 0 || packet[5] !== 1) return 0;
  let h = TRANSPORT_SEED[transport];
  for (let i = 2; i < 12; i++) h = Math.imul(h ^ packet[i], FNV_PRIME);
  let off = 12;
  for (;;) {
    if (off >= len) return 0;
    const l = packet[off];
    if (l === 0) break;
    // A pointer or a reserved label type: not a plain name.
    if (l > 63 || off + 1 + l > len) return 0;
    h = Math.imul(h ^ l, FNV_PRIME);
    for (let i = off + 1; i <= off + l; i++) h = Math.imul(h ^ lower(packet[i]), FNV_PRIME);
    off += 1 + l;
  }
  const nameEnd = off + 1;
  if (nameEnd + 4 > len) return 0;
  for (let i = off; i < len; i++) h = Math.imul(h ^ packet[i], FNV_PRIME);
  lastHash = h;
  return nameEnd;
}

/** The answer cache's key hash of a query, or null when it is never cached (tests, diagnostics). */
export function queryHash(packet: Buffer, transport: Transport): number | null {
  return hashOf(packet, transport) === 0 ? null : lastHash;
}

/** Whether the entry was made for this query: the same transport and bytes (ID aside, name case aside). */
function sameQuery(entry: Entry, packet: Buffer, transport: Transport): boolean {
  const q = entry.query;
  if (entry.transport !== transport || q.length !== packet.length - 2) return false;
  const nameEnd = entry.nameEnd;
  for (let i = 2; i < 12; i++) if (q[i - 2] !== packet[i]) return false;
  for (let i = 12; i < nameEnd; i++) if (q[i - 2] !== lower(packet[i])) return false;
  for (let i = nameEnd; i < packet.length; i++) if (q[i - 2] !== packet[i]) return false;
  return true;
}

/** Whether the answer's bytes 12..nameEnd are the query's question name, letter case aside. */
function sameNameIgnoringCase(query: Buffer, answer: Buffer, nameEnd: number): boolean {
  for (let i = 12; i < nameEnd; i++) {
    if (lower(query[i]) !== lower(answer[i])) return false;
  }
  return true;
}

/** Each byte with ASCII letters lowered (a table: one load, no branch, on the hot path). */
const LOWER = Uint8Array.from({ length: 256 }, (_, c) => (c >= 0x41 && c <= 0x5a ? c | 0x20 : c));

function lower(c: number): number {
  return LOWER[c];
}
