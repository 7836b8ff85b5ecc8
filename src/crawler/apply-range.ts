import type { Store } from "../store/store.js";
import type { Checkpoint, JournalEntry, RecentBlock } from "../store/crawler-log.port.js";
import type { ChangePosition } from "./change-events.js";
import type { ChangeEvent, ChangeEventWrite } from "../domain/change-events.js";
import type { DomainEvent } from "../providers/provider.js";
import type { CrawlerSource, CrawlerStore, SignalsFn } from "./crawler-source.js";
import { pushEventsOf } from "./journal-entries.js";
import type { JournalEvent } from "./journal-event.js";
import { type ReprojectStats, reproject } from "./reproject.js";

export interface RangeWrite {
  entries: JournalEntry[];
  /** The entries' decoded events, at the entries' indexes (journalEntriesOf): not parsed again. */
  events?: DomainEvent[][];
  checkpoint: Checkpoint;
  recentBlocks: RecentBlock[];
  /** Recent blocks below this number are pruned. */
  pruneBelow: number;
  /** Changes in blocks older than this (epoch ms) are not logged; null or absent: all are. */
  changesSince?: number | null;
  /**
   * What the range's change events become before they are appended, given the range's
   * transaction, its map projected (the SNS source's settlement of the events it announced at
   * `confirmed`: duplicates dropped, retractions and the announcements' winner.changed added;
   * docs/sns.md). Called once a range, with no events when none were made.
   */
  settle?: (tx: RangeTx, events: ChangeEventWrite[]) => Promise<ChangeEventWrite[]>;
}

/** A range's journal entries, their projection and the checkpoint: one transaction. */
export async function applyRange(
  store: CrawlerStore,
  source: CrawlerSource,
  write: RangeWrite,
  signals: SignalsFn,
): Promise<ReprojectStats & { inserted: number }> {
  return store.transaction((tx) => applyRangeIn(tx, source, write, signals));
}

/** A range's transaction: the crawler's parts, and what a settlement ranks (scoring, projects). */
export type RangeTx = Pick<Store, "crawlerLog" | "domainMap" | "changeLog" | "scoring" | "accounts">;

/** `applyRange` inside the caller's transaction. */
export async function applyRangeIn(
  tx: RangeTx,
  source: CrawlerSource,
  write: RangeWrite,
  signals: SignalsFn,
): Promise<ReprojectStats & { inserted: number }> {
  // The tokens' earlier events, read before this range is appended, followed by the range's own:
  // in a backfill most tokens are new and nothing is read back.
  const known = new Map<string, JournalEvent[]>();
  for (const e of write.entries) if (!known.has(e.tokenId as string)) known.set(e.tokenId as string, []);
  const keys = [...known.keys()];
  // Positions already journaled, by the journal's own key (source, block, log index, token: one
  // branch per source): an entry there is skipped by appendJournal, whatever its block hash, so
  // it is not folded either; a reorg's rollback deletes the old branch before its positions are
  // written again.
  const seen = new Set<string>();
  const seenTokens = new Set<string>();
  for (const e of await tx.crawlerLog.findJournalByTokens(source.id, keys)) {
    seen.add(`${e.blockNumber}:${e.logIndex}:${e.tokenId}`);
    seenTokens.add(e.tokenId as string);
    const list = known.get(e.tokenId as string);
    if (list) pushEventsOf(e, list);
  }
  write.entries.forEach((e, i) => {
    // An entry already in the journal (a range applied again) is folded once, from the journal.
    if (seen.size > 0 && seen.has(`${e.blockNumber}:${e.logIndex}:${e.tokenId}`)) return;
    pushEventsOf(e, known.get(e.tokenId as string) as JournalEvent[], write.events?.[i]);
  });
  // Tokens whose only events are this range's: no domain row to read back for the change log.
  const fresh = new Set<string>();
  for (const [k, list] of known) if (!seenTokens.has(k) && list.length > 0) fresh.add(k);
  // Each token's last entry in the range; its position is built when asked for (once a domain).
  const last = new Map<string, JournalEntry>();
  for (const e of write.entries) last.set(e.tokenId as string, e);
  const top: ChangePosition = {
    blockNumber: write.checkpoint.blockNumber,
    blockHash: write.checkpoint.blockHash,
    txHash: null,
    blockTime: null,
  };
  const inserted = await tx.crawlerLog.appendJournal(write.entries);
  let settled = false;
  const settle = write.settle;
  const stats = await reproject(tx, source, keys, signals, known, {
    settle: settle
      ? (events) => {
          settled = true;
          return settle(tx, events);
        }
      : undefined,
    now: write.checkpoint.updatedAt,
    since: write.changesSince ?? null,
    fresh,
    positionOf: (tokenId) => {
      const e = last.get(tokenId);
      if (e === undefined) return top;
      return {
        blockNumber: e.blockNumber,
        blockHash: e.blockHash,
        txHash: e.txHash,
        blockTime: e.blockTime == null ? null : e.blockTime * 1000,
      };
    },
  });
  if (settle && !settled) await tx.changeLog.appendChangeEvents(await settle(tx, []));
  if (write.recentBlocks.length > 0) await tx.crawlerLog.putRecentBlocks(source.id, write.recentBlocks);
  await tx.crawlerLog.deleteRecentBlocks(source.id, { below: write.pruneBelow });
  await tx.crawlerLog.setCheckpoint(write.checkpoint);
  return { ...stats, inserted };
}

/**
 * Undoes everything above `ancestor`: deletes the orphaned journal entries and recent blocks,
 * replays the tokens they touched from the remaining journal, and moves the checkpoint back.
 */
export async function rollbackTo(
  store: CrawlerStore,
  source: CrawlerSource,
  ancestor: { blockNumber: number; blockHash: string },
  state: string,
  now: number,
  signals: SignalsFn,
): Promise<ReprojectStats & { entriesDeleted: number; tokens: number }> {
  return store.transaction(async (tx) => {
    const keys = await tx.crawlerLog.findJournalTokensAfter(source.id, ancestor.blockNumber);
    const entriesDeleted = await tx.crawlerLog.deleteJournalAfter(source.id, ancestor.blockNumber);
    await tx.crawlerLog.deleteRecentBlocks(source.id, { above: ancestor.blockNumber });
    // The events of the orphaned blocks are retracted; the corrected state follows as events.
    const at: ChangePosition = { ...ancestor, txHash: null, blockTime: null };
    const orphaned = await tx.changeLog.findRetractableChangeEvents(source.id, ancestor.blockNumber);
    await tx.changeLog.appendChangeEvents(orphaned.map((e) => retraction(e, at, now)));
    const stats = await reproject(tx, source, keys, signals, new Map(), {
      now,
      since: null,
      fresh: new Set(),
      positionOf: () => at,
    });
    await tx.crawlerLog.setCheckpoint({
      sourceId: source.id,
      chainId: source.chainId,
      blockNumber: ancestor.blockNumber,
      blockHash: ancestor.blockHash,
      updatedAt: now,
      state,
      error: null,
    });
    return { ...stats, entriesDeleted, tokens: keys.length };
  });
}

/** The `change.retracted` of an event a reorg undid, at the common ancestor. */
export function retraction(e: ChangeEvent, at: ChangePosition, now: number): ChangeEventWrite {
  return {
    type: "change.retracted",
    createdAt: now,
    sourceId: e.sourceId,
    network: e.network,
    provider: e.provider,
    tokenId: e.tokenId,
    name: e.name,
    tld: e.tld,
    ...at,
    retracts: e.id,
    projectId: e.projectId,
    payload: { retracted: { type: e.type, payload: e.payload } },
  };
}
