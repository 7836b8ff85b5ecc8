import { AppError } from "../domain/errors.js";
import type { AtPoint, EventOrigin, IndexPosition } from "../domain/history.js";
import { NETWORK_ORDER, NETWORKS } from "../domain/networks.js";
import { type DomainFilter, matchesFilter } from "../domain/types.js";
import { ADAPTERS } from "../providers/adapters.js";
import type {
  Checkpoint,
  CrawlerLog,
  JournalBound,
  JournalEntry,
  SourceLease,
} from "../store/crawler-log.port.js";
import type { CrawlerSource } from "./crawler-source.js";
import { sourceIdOf } from "./sources.js";

/** The store reads time travel makes of the crawler's log. */
export type HistoryLog = Pick<
  CrawlerLog,
  | "listCheckpoints"
  | "listSourceLeases"
  | "findJournalUpTo"
  | "findJournalKeysMentioning"
  | "findJournalStart"
  | "findJournalTimeAt"
>;

/** A source as the API knows it: from its checkpoint (the API has no RPC URL or contract list). */
export interface IndexedSource {
  source: CrawlerSource;
  checkpoint: Checkpoint;
}

/**
 * The sources the index holds, in network then provider order: every (provider, network) pair whose
 * checkpoint exists, under its source id (sources.ts `sourceIdOf`). Only `id`, `provider`,
 * `network`, `chainId` and `adapter` of each source are meaningful: what the fold needs.
 */
export function indexedSources(checkpoints: readonly Checkpoint[]): IndexedSource[] {
  const byId = new Map(checkpoints.map((c) => [c.sourceId, c]));
  const out: IndexedSource[] = [];
  for (const network of NETWORK_ORDER) {
    for (const adapter of ADAPTERS) {
      const id = sourceIdOf(adapter.provider, network);
      const checkpoint = byId.get(id);
      if (!checkpoint) continue;
      const source: CrawlerSource = {
        id,
        provider: adapter.provider,
        network,
        chainId: checkpoint.chainId,
        adapter,
        contracts: { addresses: {}, startBlock: 0 },
        rpcUrl: "",
      };
      out.push({ source, checkpoint });
    }
  }
  return out;
}

/** The journal bound of a point in time: a block, or a block time in epoch seconds (inclusive). */
export function boundOf(at: AtPoint): JournalBound {
  return at.kind === "block" ? { block: at.block } : { time: Math.floor(at.time / 1000) };
}

const FIRST_BLOCK_TTL_MS = 5_000;

/**
 * The sources a time-travel query covers, after checking that the index can answer for `at`:
 * the sources of `filter` (and of the block's network for `atBlock`). Throws AT_AFTER_INDEX for a
 * time in the future or a block past the network's checkpoint, AT_BEFORE_INDEX for a point before
 * the first block a covered source's journal holds (or a network nothing indexes).
 */
export function createCoverage(
  log: HistoryLog,
): (at: AtPoint, filter: DomainFilter, now: number) => Promise<IndexedSource[]> {
  // A source's first journal block moves only when its index is cleared: read once in a while.
  const firsts = new Map<
    string,
    { at: number; value: Awaited<ReturnType<HistoryLog["findJournalStart"]>> }
  >();
  const firstOf = async (sourceId: string, now: number) => {
    const hit = firsts.get(sourceId);
    if (hit && now - hit.at < FIRST_BLOCK_TTL_MS && now >= hit.at) return hit.value;
    const value = await log.findJournalStart(sourceId);
    firsts.set(sourceId, { at: now, value });
    return value;
  };
  return async (at, filter, now) => {
    if (at.kind === "time" && at.time > now)
      throw new AppError(
        "AT_AFTER_INDEX",
        `The parameter "at" is in the future (${new Date(at.time).toISOString()}): the index answers up to now.`,
      );
    const all = indexedSources(await log.listCheckpoints());
    if (all.length === 0)
      throw new AppError(
        "AT_BEFORE_INDEX",
        `The parameter "${at.kind === "block" ? "atBlock" : "at"}" asks for a point before anything was indexed: the index holds no source yet.`,
      );
    let covered = all.filter((s) => matchesFilter(s.source, filter));
    if (at.kind === "block") {
      const onNetwork = all.filter((s) => s.source.network === at.network);
      if (onNetwork.length === 0)
        throw new AppError(
          "AT_BEFORE_INDEX",
          `The parameter "atBlock" names ${at.network}, where nothing is indexed: no block of it can be asked for.`,
        );
      covered = covered.filter((s) => s.source.network === at.network);
      for (const s of onNetwork) {
        if (at.block > s.checkpoint.blockNumber)
          throw new AppError(
            "AT_AFTER_INDEX",
            `The parameter "atBlock" asks for block ${at.block} of ${at.network}, past the last block indexed (${s.checkpoint.blockNumber}, source ${s.source.id}).`,
          );
      }
    }
    const bound = boundOf(at);
    const answering: IndexedSource[] = [];
    for (const s of covered) {
      const first = await firstOf(s.source.id, now);
      if (first === null) continue; // nothing ever happened on this source: nothing to answer from
      const before =
        "block" in bound
          ? bound.block < first.blockNumber
          : first.blockTime !== null && bound.time < first.blockTime;
      if (before) {
        const firstAt =
          first.blockTime === null ? "" : ` (${new Date(first.blockTime * 1000).toISOString()})`;
        throw new AppError(
          "AT_BEFORE_INDEX",
          `The parameter "${at.kind === "block" ? "atBlock" : "at"}" asks for ${
            at.kind === "block" ? `block ${at.block}` : new Date(at.time).toISOString()
          }, before the first block indexed for source ${s.source.id}: block ${first.blockNumber}${firstAt}.`,
        );
      }
      answering.push(s);
    }
    return answering;
  };
}

/** Where a source's index stands: its checkpoint, and its lag behind the head its writer last reported. */
export function indexPosition(
  checkpoint: Checkpoint,
  lease: SourceLease | undefined,
  now: number,
): IndexPosition {
  const head = lease?.head ?? null;
  const lagBlocks = head === null ? null : Math.max(0, head - checkpoint.blockNumber);
  let secondsBehind: number | null = null;
  if (lagBlocks === 0) secondsBehind = 0;
  else if (lease?.syncedAt != null) secondsBehind = Math.max(0, Math.round((now - lease.syncedAt) / 1000));
  return { block: checkpoint.blockNumber, blockHash: checkpoint.blockHash, lagBlocks, secondsBehind };
}

/**
 * The provenance form of a journal entry. An SNS entry (SOLANA's journal: a pass's state of a name,
 * no event log) also names its `slot` and the `account` it was read from (docs/sns.md).
 */
export function originOf(entry: JournalEntry): EventOrigin {
  const t = entry.blockTime ?? null;
  const origin: EventOrigin = {
    chainId: entry.chainId,
    blockNumber: entry.blockNumber,
    blockHash: entry.blockHash,
    transactionHash: entry.txHash,
    logIndex: entry.logIndex,
    blockTime: t === null ? null : new Date(t * 1000).toISOString(),
  };
  if (entry.chainId === NETWORKS.SOLANA.chainId) {
    origin.slot = entry.blockNumber;
    origin.account = entry.contract;
  }
  return origin;
}
