import type { DomainEvent, ProviderAdapter } from "../providers/provider.js";
import type { JournalEntry } from "../store/crawler-log.port.js";
import type { CrawlerSource } from "./crawler-source.js";
import type { FetchedLog, PreDecoded } from "./log-batch.js";
import { foldKeyOf, type JournalEvent } from "./projection.js";

export interface DecodeIssue {
  reason: string;
  blockNumber: number;
  logIndex: number;
  address: string;
}

/**
 * Decodes fetched logs into journal entries: one entry per log and fold key, its events as a JSON
 * array. A log the adapter refuses (unknown topic, malformed, token-id mismatch, bad name) is
 * reported and skipped, never fatal.
 */
export function journalEntriesOf(
  source: CrawlerSource,
  logs: readonly FetchedLog[],
  blockTimes: ReadonlyMap<number, number>,
  issues: DecodeIssue[],
): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (const log of logs) {
    let result: PreDecoded | ReturnType<ProviderAdapter["decode"]>;
    if (log.decoded) result = log.decoded;
    else {
      try {
        result = source.adapter.decode(log, source.contracts);
      } catch (e) {
        result = { ok: false, reason: `decoder threw: ${(e as Error).message}` };
      }
    }
    if (!result.ok) {
      issues.push({
        reason: result.reason,
        blockNumber: log.blockNumber,
        logIndex: log.logIndex,
        address: log.address,
      });
      continue;
    }
    const { events } = result;
    if (events.length === 0) continue;
    const blockTime = log.blockTime ?? blockTimes.get(log.blockNumber) ?? null;
    const json = "json" in result ? result.json : null;
    // Nearly every log is one event, or events of one token: one row, no grouping, and the JSON
    // the decode worker already wrote.
    const key = foldKeyOf(events[0]);
    if (events.length === 1 || events.every((ev) => foldKeyOf(ev) === key)) {
      out.push(entryOf(source, log, key, events, json ?? JSON.stringify(events), blockTime));
      continue;
    }
    const byKey = new Map<string, DomainEvent[]>();
    for (const ev of events) {
      const k = foldKeyOf(ev);
      const list = byKey.get(k);
      if (list) list.push(ev);
      else byKey.set(k, [ev]);
    }
    // One row per log and token: a log may concern several tokens (ERC-1155 TransferBatch).
    for (const [k, list] of byKey) out.push(entryOf(source, log, k, list, JSON.stringify(list), blockTime));
  }
  return out;
}

function entryOf(
  source: CrawlerSource,
  log: FetchedLog,
  tokenId: string,
  events: DomainEvent[],
  json: string,
  blockTime: number | null,
): JournalEntry {
  const entry: JournalEntry = {
    sourceId: source.id,
    chainId: log.chainId,
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
    logIndex: log.logIndex,
    txHash: log.transactionHash,
    contract: log.address,
    tokenId,
    event: json,
    blockTime,
  };
  decoded.set(entry, events);
  return entry;
}

// The events of entries decoded in this process, so that applying a range does not parse back the
// JSON it has just written.
const decoded = new WeakMap<JournalEntry, DomainEvent[]>();

/** Appends the events of a journal entry, at its place on the chain, to `out`. */
export function pushEventsOf(entry: JournalEntry, out: JournalEvent[]): void {
  const parsed = decoded.get(entry) ?? (JSON.parse(entry.event) as DomainEvent | DomainEvent[]);
  const blockTime = entry.blockTime ?? null;
  const push = (event: DomainEvent) =>
    out.push({
      event,
      blockNumber: entry.blockNumber,
      logIndex: entry.logIndex,
      blockTime,
      contract: entry.contract,
    });
  if (Array.isArray(parsed)) for (const event of parsed) push(event);
  else push(parsed);
}
