import type { DomainRecord, DomainWrite } from "../domain/types.js";
import type { Checkpoint, JournalEntry } from "./crawler-log.port.js";
import type { EncodedDomains, SnapshotEncoding } from "./snapshot-encode.js";
import { safeText } from "./kysely/rows.js";

/** One validated domain line of a snapshot: the domain, its records, the addresses naming it. */
export interface SnapshotDomain {
  domain: DomainWrite;
  records: DomainRecord[];
  /** Addresses whose reverse record (on the domain's network and provider) names this domain. */
  reverse: string[];
}

/**
 * A backend's bulk writer of a snapshot import, open on one transaction (`withSnapshotSink`):
 * nothing it writes is visible before the transaction commits, and all of it is gone if it rolls
 * back. Domains upsert by (network, provider, token id), in the order given (a new domain's id
 * follows the order of the file); a domain's records replace its stored ones; reverse records
 * upsert by (address, network, provider). Into an empty map a backend may bulk-load
 * (snapshot-bulk-load.ts): ids follow the file densely, and a token seen in two batches ends as
 * the upserts would leave it (the first line's id, the last line's columns and records), once
 * `withSnapshotSink`'s function has returned and before the commit.
 *
 * @example
 * await store.withSnapshotSink?.(async (sink) => {
 *   await sink.writeDomains([{ domain, records, reverse: [owner] }]);
 *   await sink.writeJournal(entries);
 * });
 */
export interface SnapshotSink {
  /** Writes a batch; a token listed twice in one batch keeps its last line. */
  writeDomains(batch: SnapshotDomain[]): Promise<void>;
  /** Appends journal entries (already known positions are skipped); returns how many were new. */
  writeJournal(entries: JournalEntry[]): Promise<number>;
  writeCheckpoints(checkpoints: Checkpoint[]): Promise<void>;
  /**
   * The form in which the sink takes batches already folded (`lastPerToken`) and encoded where the
   * lines were parsed (snapshot-encode.ts, the parse worker); absent: only `writeDomains`.
   */
  readonly encoding?: SnapshotEncoding;
  /** Writes such a batch: what `writeDomains` does with the batch it was encoded from. */
  writeEncoded?(batch: EncodedDomains): Promise<void>;
}

/**
 * The batch with one entry per token: the last line of a token wins, at the place of its first
 * (one statement may not touch a row twice on PostgreSQL). A domain's records keep the last of a
 * key (as stored: NUL read as U+FFFD), its reverse addresses each once, and an address claimed by
 * two domains of the batch on one network and provider stays with the last.
 */
export function lastPerToken(batch: SnapshotDomain[]): SnapshotDomain[] {
  // Distinct token ids (the common batch) are distinct tokens: no key strings to build and hash.
  const tokenIds = new Set<string>();
  for (const b of batch) tokenIds.add(b.domain.tokenId);
  let out = batch;
  if (tokenIds.size !== batch.length) {
    const byToken = new Map<string, SnapshotDomain>();
    for (const b of batch) byToken.set(`${b.domain.network}|${b.domain.provider}|${b.domain.tokenId}`, b);
    out = [...byToken.values()];
  }
  const claimant = new Map<string, SnapshotDomain>();
  for (const b of out)
    for (const a of b.reverse) claimant.set(`${a}|${b.domain.network}|${b.domain.provider}`, b);
  // Most domains have neither repeated keys nor shared addresses: they pass as they are.
  return out.map((b) => {
    const distinct = distinctKeys(b.records);
    if (b.reverse.length === 0 && distinct) return b;
    const reverse = [...new Set(b.reverse)].filter(
      (a) => claimant.get(`${a}|${b.domain.network}|${b.domain.provider}`) === b,
    );
    if (distinct && reverse.length === b.reverse.length) return b;
    const records = distinct ? b.records : [...new Map(b.records.map((r) => [safeText(r.key), r])).values()];
    return { domain: b.domain, records, reverse };
  });
}

/**
 * Whether no two records share a key as stored (NUL read as U+FFFD, as safeText does): a domain's
 * handful of keys compared pairwise, without the array and set of each domain.
 */
function distinctKeys(records: DomainRecord[]): boolean {
  const asStored = () => new Set(records.map((r) => safeText(r.key))).size === records.length;
  if (records.length > 16) return asStored();
  for (let i = 0; i < records.length; i++) {
    const k = records[i].key;
    if (k.includes("\u0000")) return asStored();
    for (let j = 0; j < i; j++) if (records[j].key === k) return false;
  }
  return true;
}
