import type { DomainEvent } from "../providers/provider.js";
import type { RecentBlock } from "../store/crawler-log.port.js";
import { applyRange } from "./apply-range.js";
import type { BlockHeader } from "./chain-reader.js";
import type { SourceContext } from "./crawler-source.js";
import { type DecodeIssue, journalEntriesOf } from "./journal-entries.js";
import type { FetchedLog } from "./log-batch.js";
import type { DataIssue } from "./projection.js";
import type { RangePart } from "./range-fetch.js";
import type { BlockRef } from "./reorg.js";

/**
 * Decodes and writes one part of a range with its checkpoint (one transaction), reports the logs
 * and chain data it skipped, and returns the new checkpoint. `headers` holds the headers read for
 * the range; block times the logs lack are read here.
 */
export async function writePart(
  ctx: SourceContext,
  part: RangePart,
  logs: FetchedLog[],
  headers: Map<number, BlockHeader>,
  head: number,
): Promise<BlockRef> {
  const { source, metrics, finality } = ctx;
  const id = { source: source.id };
  const unfinalizedFrom = head - finality + 1;
  const missing = [
    ...new Set(
      logs.filter((l) => l.blockTime === null && !headers.has(l.blockNumber)).map((l) => l.blockNumber),
    ),
  ];
  for (const h of await ctx.reader.headers(missing)) headers.set(h.number, h);
  const times = new Map<number, number>();
  for (const h of headers.values()) times.set(h.number, h.timestamp);

  const decodeIssues: DecodeIssue[] = [];
  const events: DomainEvent[][] = [];
  const entries = journalEntriesOf(source, logs, times, decodeIssues, events);
  const top = headers.get(part.to) as BlockHeader;
  const recent: RecentBlock[] = [];
  for (const h of headers.values())
    if (h.number >= unfinalizedFrom && h.number >= part.from && h.number <= part.to)
      recent.push({ blockNumber: h.number, blockHash: h.hash, parentHash: h.parentHash });
  recent.sort((a, b) => a.blockNumber - b.blockNumber);
  const started = ctx.clock();
  const stats = await applyRange(
    ctx.store,
    source,
    {
      entries,
      events,
      checkpoint: {
        sourceId: source.id,
        chainId: source.chainId,
        blockNumber: part.to,
        blockHash: top.hash,
        updatedAt: started,
        state: head - part.to > finality ? "syncing" : "live",
        error: null,
      },
      recentBlocks: recent,
      pruneBelow: unfinalizedFrom - 1,
      changesSince: ctx.changeRetentionMs === undefined ? null : started - ctx.changeRetentionMs,
    },
    ctx.signals,
  );
  const elapsed = Math.max(1, ctx.clock() - started);
  metrics?.applySeconds.observe(id, elapsed / 1000);
  report(ctx, decodeIssues, stats.issues);

  metrics?.events.inc(id, logs.length);
  metrics?.checkpoint.set(id, part.to);
  metrics?.lag.set(id, head - part.to);
  return { blockNumber: part.to, blockHash: top.hash };
}

function report(ctx: SourceContext, decodeIssues: DecodeIssue[], dataIssues: DataIssue[]): void {
  const { log, metrics, source } = ctx;
  for (const i of decodeIssues) {
    metrics?.badData.inc({ source: source.id, reason: "decode" });
    log.warn({ block: i.blockNumber, logIndex: i.logIndex, contract: i.address }, `skipped log: ${i.reason}`);
  }
  for (const i of dataIssues) {
    metrics?.badData.inc({ source: source.id, reason: i.reason });
    log.warn({ tokenId: i.tokenId, reason: i.reason }, `bad chain data: ${i.detail}`);
  }
}
