import type { DomainRecord, DomainWithRecords, DomainWrite } from "../domain/types.js";
import type { Store } from "../store/store.js";
import type { ReverseChange } from "../store/domain-map.port.js";
import { type ChangeLogging, changeEventsOf, isLogged } from "./change-events.js";
import type { CrawlerSource, SignalsFn } from "./crawler-source.js";
import { domainWriteOf, type FoldReader, foldKeys } from "./fold-keys.js";
import type { JournalEvent } from "./journal-event.js";
import type { DataIssue } from "./projection.js";

export interface ReprojectStats {
  domainsWritten: number;
  domainsDeleted: number;
  reverseWritten: number;
  issues: DataIssue[];
}

/**
 * Recomputes the domains (and reverse claims) of `keys` from the source's whole journal and writes
 * them. The same code serves a new range, a crash resume and a reorg replay: the journal is the
 * truth and the domain tables are its projection. Must run inside the caller's transaction.
 */
export async function reproject(
  tx: Pick<Store, "crawlerLog" | "domainMap" | "changeLog">,
  source: CrawlerSource,
  keys: Iterable<string>,
  signals: SignalsFn,
  /** Complete, chain-ordered event lists already at hand (applyRange), not read again. */
  known: ReadonlyMap<string, JournalEvent[]> = new Map(),
  /** Log the changes to the change log (change-events.ts), in this transaction. */
  logging?: ChangeLogging,
): Promise<ReprojectStats> {
  const stats: ReprojectStats = { domainsWritten: 0, domainsDeleted: 0, reverseWritten: 0, issues: [] };
  const reader: FoldReader = {
    journalOf: (sourceId, list) => tx.crawlerLog.findJournalByTokens(sourceId, list),
    findDomainByToken: (network, provider, tokenId) =>
      tx.domainMap.findDomainByToken(network, provider, tokenId),
  };
  const { projected, dead, reverseTargets: targets, issues } = await foldKeys(reader, source, keys, known);
  stats.issues = issues;
  if (projected.length === 0 && dead.length === 0 && targets.size === 0) return stats;

  // One object a domain: its write (the scoring fields set in place) and its records, which the
  // store's writes ignore and the change log reads.
  const writes: Array<DomainWrite & { records: DomainRecord[] }> = projected.map((p) => {
    const d = domainWriteOf(source, p);
    // A name that failed normalization is stored under its placeholder; the scoring rules judge
    // the stored name, exactly as a later rescoring will, so the two never disagree.
    const s = signals(d, p.records);
    d.baseScore = s.baseScore;
    d.spam = s.spam;
    d.csamOk = s.csamOk;
    d.kyc = s.kyc;
    d.tags = s.tags;
    return d;
  });
  // The state before, for the change log: only tokens with an earlier journal entry can have one.
  let before = new Map<string, DomainWithRecords>();
  if (logging) {
    // Every folded token: the live ones written below and the dead ones deleted.
    const read = [...projected.map((p) => p.tokenId), ...dead].filter(
      (tokenId) => !logging.fresh.has(tokenId) && isLogged(logging, logging.positionOf(tokenId)),
    );
    if (read.length > 0)
      before = await tx.domainMap.findDomainsByTokens(source.network, source.provider, read);
  }
  const ids = await tx.domainMap.upsertDomains(writes);
  await tx.domainMap.replaceRecordsMany(
    ids.map((domainId, i) => ({ domainId, records: projected[i].records })),
  );
  stats.domainsWritten = ids.length;

  if (dead.length > 0) {
    const existing = await tx.domainMap.findDomainIdsByTokens(source.network, source.provider, dead);
    for (const id of existing.values()) await tx.domainMap.deleteDomain(id);
    stats.domainsDeleted = existing.size;
  }
  if (logging) {
    const events = changeEventsOf(source, logging, before, writes, dead);
    await tx.changeLog.appendChangeEvents(logging.settle ? await logging.settle(events) : events);
  }

  if (targets.size > 0) {
    const wanted = [...new Set([...targets.values()].filter((t): t is string => t !== null))];
    const idOf = await tx.domainMap.findDomainIdsByTokens(source.network, source.provider, wanted);
    const changes: ReverseChange[] = [];
    for (const [address, tokenId] of targets) {
      // A claim naming a domain not indexed (yet) stays in the journal; it is not served.
      const domainId = tokenId === null ? null : (idOf.get(tokenId) ?? null);
      changes.push({ network: source.network, provider: source.provider, address, domainId });
      if (domainId !== null) stats.reverseWritten++;
    }
    // One write for the range's addresses (a round trip each on PostgreSQL was one per address).
    await tx.domainMap.applyReverses(changes);
  }
  return stats;
}
