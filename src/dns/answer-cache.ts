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
  /** The answer to the first query of this key: its ID and question name are the only bytes to patch. */
  answer: Buffer;
  /** End of the question name in both packets (the name starts at offset 12). */
  nameEnd: number;
  stamp: AnswerStamp;
  validUntil: number;
}

export interface AnswerCacheOptions {
  lookup: StampedZoneLookup;
  clock: () => number;
  maxEntries?: number;
}

/**
 * The authoritative server's answer cache: the wire answer of a query, kept under the query's bytes
 * with the ID left out and the question name in lower case, so a repeated query is answered by
 * copying bytes (its ID and its own question name, 0x20 case included, written into the copy).
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
  private readonly entries = new Map<string, Entry>();
  private readonly max: number;
  /** Scratch copy of the query in which the name is lowered to make the key. */
  private readonly scratch = Buffer.alloc(MAX_CACHED_QUERY);
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
    const keyed = this.keyOf(packet, transport);
    if (keyed === null) return null;
    const entry = this.entries.get(keyed.key);
    if (entry === undefined) return null;
    const stamp = this.opts.lookup.answerStamp();
    if (
      stamp === null ||
      stamp.map !== entry.stamp.map ||
      stamp.zones !== entry.stamp.zones ||
      this.opts.clock() >= entry.validUntil
    ) {
      this.entries.delete(keyed.key);
      return null;
    }
    this.hits++;
    const out = Buffer.allocUnsafe(entry.answer.length);
    entry.answer.copy(out);
    out[0] = packet[0];
    out[1] = packet[1];
    packet.copy(out, 12, 12, entry.nameEnd);
    return out;
  }

  /** Computes the answer (answerQuery) and keeps it when it may be reused. */
  async answer(packet: Buffer, transport: Transport): Promise<Buffer | null> {
    this.misses++;
    const stamp = this.opts.lookup.answerStamp();
    const report: AnswerReport = { validUntil: Number.POSITIVE_INFINITY, cacheable: false };
    const answer = await answerQuery(packet, this.opts.lookup, transport, report);
    if (answer === null || stamp === null || !report.cacheable || this.max <= 0) return answer;
    const keyed = this.keyOf(packet, transport);
    // The answer must echo the question at offset 12 (it does unless the packet was cut short).
    if (
      keyed === null ||
      answer.length < keyed.nameEnd ||
      !sameNameIgnoringCase(packet, answer, keyed.nameEnd)
    )
      return answer;
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(keyed.key, { answer, nameEnd: keyed.nameEnd, stamp, validUntil: report.validUntil });
    return answer;
  }

  clear(): void {
    this.entries.clear();
  }

  /**
   * The key of a query: transport, then every byte but the ID, with the question name's ASCII
   * letters lowered. Null for what is not a plain one-question query (those take the full path).
   */
  private keyOf(packet: Buffer, transport: Transport): { key: string; nameEnd: number } | null {
    const len = packet.length;
    if (len < 17 || len > MAX_CACHED_QUERY) return null;
    // QR=0, opcode QUERY, one question.
    if ((packet[2] & 0xf8) !== 0 || packet[4] !== 0 || packet[5] !== 1) return null;
    const s = this.scratch;
    packet.copy(s, 0, 0, len);
    let off = 12;
    for (;;) {
      if (off >= len) return null;
      const l = s[off];
      if (l === 0) break;
      // A pointer or a reserved label type: not a plain name.
      if (l > 63 || off + 1 + l > len) return null;
      for (let i = off + 1; i <= off + l; i++) {
        const c = s[i];
        if (c >= 0x41 && c <= 0x5a) s[i] = c | 0x20;
      }
      off += 1 + l;
    }
    const nameEnd = off + 1;
    if (nameEnd + 4 > len) return null;
    return { key: transport + s.toString("latin1", 2, len), nameEnd };
  }
}

/** Whether the answer's bytes 12..nameEnd are the query's question name, letter case aside. */
function sameNameIgnoringCase(query: Buffer, answer: Buffer, nameEnd: number): boolean {
  for (let i = 12; i < nameEnd; i++) {
    if (lower(query[i]) !== lower(answer[i])) return false;
  }
  return true;
}

function lower(c: number): number {
  return c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
}
