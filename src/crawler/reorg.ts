import { AppError } from "../domain/errors.js";
import { rollbackTo } from "./apply-range.js";
import type { ChainReader } from "./chain-reader.js";
import type { CrawlerStore, SourceContext } from "./crawler-source.js";

/** A reorg deeper than the finality window (REORG_BEYOND_FINALITY): the source stops, the data stays served. */
export function isBeyondFinality(e: unknown): e is AppError {
  return e instanceof AppError && e.code === "REORG_BEYOND_FINALITY";
}

/** A block the source has applied: its number and hash. */
export interface BlockRef {
  blockNumber: number;
  blockHash: string;
}

/** The stored hash of block `n` of a source, or null when it is not among the recent blocks. */
async function storedHashOf(store: CrawlerStore, sourceId: string, n: number): Promise<string | null> {
  const [b] = await store.crawlerLog.findRecentBlocks(sourceId, n);
  return b && b.blockNumber === n ? b.blockHash : null;
}

/**
 * Caught up (the head at or below the checkpoint), near the head: true when the chain no longer
 * holds a block the source applied there, and the source must roll back. A reorg to a chain no
 * longer than ours is seen only this way.
 */
export async function tipReplaced(ctx: SourceContext, checkpoint: BlockRef, head: number): Promise<boolean> {
  if (checkpoint.blockHash === "" || checkpoint.blockNumber - head > ctx.finality) return false;
  const top = await ctx.reader.header(head);
  const known =
    head === checkpoint.blockNumber
      ? checkpoint.blockHash
      : await storedHashOf(ctx.store, ctx.source.id, head);
  return known !== null && known !== top.hash;
}

/**
 * The highest block at or below the checkpoint (and the head) whose stored hash is still the
 * chain's, searched over the stored hashes of the finality window, newest first; null when the
 * reorg goes deeper than the window.
 */
async function findCommonAncestor(
  reader: ChainReader,
  store: CrawlerStore,
  sourceId: string,
  checkpoint: number,
  head: number,
  finality: number,
): Promise<BlockRef | null> {
  const stored = (await store.crawlerLog.findRecentBlocks(sourceId, checkpoint - finality))
    .filter((b) => b.blockNumber <= Math.min(head, checkpoint))
    .reverse();
  for (let i = 0; i < stored.length; i += 25) {
    const chunk = stored.slice(i, i + 25);
    const canonical = await reader.headers(chunk.map((b) => b.blockNumber));
    for (let k = 0; k < chunk.length; k++) if (canonical[k].hash === chunk[k].blockHash) return chunk[k];
  }
  return null;
}

/**
 * Walks back from the checkpoint over the stored hashes of unfinalized blocks to the highest
 * block still on the chain, rolls back to it and returns it as the new checkpoint. No common
 * ancestor within the finality window: throws REORG_BEYOND_FINALITY (the source halts).
 */
export async function rollBackReorg(
  ctx: SourceContext,
  checkpoint: BlockRef,
  head: number,
): Promise<BlockRef> {
  const { source, finality } = ctx;
  const floor = checkpoint.blockNumber - finality;
  const ancestor = await findCommonAncestor(
    ctx.reader,
    ctx.store,
    source.id,
    checkpoint.blockNumber,
    head,
    finality,
  );
  ctx.metrics?.reorgs.inc({ source: source.id });
  if (!ancestor) {
    throw new AppError(
      "REORG_BEYOND_FINALITY",
      `reorg deeper than the finality window of ${finality} blocks on ${source.network}: block ${checkpoint.blockNumber} ` +
        `(${checkpoint.blockHash}) is no longer on the chain and no common ancestor was found down to block ${Math.max(0, floor)}; ` +
        `the source is halted and its data left as of block ${checkpoint.blockNumber}`,
    );
  }
  const depth = checkpoint.blockNumber - ancestor.blockNumber;
  const result = await rollbackTo(ctx.store, source, ancestor, "live", ctx.clock(), ctx.signals);
  ctx.log.warn(
    {
      from: checkpoint.blockNumber,
      ancestor: ancestor.blockNumber,
      depth,
      replayed: result.tokens,
      deleted: result.entriesDeleted,
    },
    `reorg of ${depth} blocks rolled back to block ${ancestor.blockNumber}`,
  );
  return { blockNumber: ancestor.blockNumber, blockHash: ancestor.blockHash };
}
