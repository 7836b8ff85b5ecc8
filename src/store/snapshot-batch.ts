import type { DomainRecord } from "../domain/types.js";
import { safeText } from "./kysely/rows.js";
import type { SnapshotDomain } from "./snapshot-sink.port.js";

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
