import type { DomainEvent, ProviderAdapter } from "../providers/provider.js";
import type { JournalEntry } from "../store/crawler-log.port.js";
import type { CrawlerSource } from "./crawler-source.js";
import type { FetchedLog, PreDecoded } from "./log-batch.js";
import type { JournalEvent } from "./journal-event.js";
import { foldKeyOf } from "./projection.js";

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
  /**
   * When given, receives each entry's decoded events at the entry's index (applyRange's
   * `RangeWrite.events`), instead of the module's weak map of entries decoded in this process.
   */
  events?: DomainEvent[][],
): JournalEntry[] {
  const out: JournalEntry[] = [];
  const keep = (entry: JournalEntry, list: DomainEvent[]) => {
    out.push(entry);
    if (events) events.push(list);
    else decoded.set(entry, list);
  };
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
    const logEvents = result.events;
    if (logEvents.length === 0) continue;
    const blockTime = log.blockTime ?? blockTimes.get(log.blockNumber) ?? null;
    const json = "json" in result ? result.json : null;
    // Nearly every log is one event, or events of one token: one row, no grouping, and the JSON
    // the decode worker already wrote.
    const key = foldKeyOf(logEvents[0]);
    if (logEvents.length === 1 || logEvents.every((ev) => foldKeyOf(ev) === key)) {
      keep(entryOf(source, log, key, json ?? JSON.stringify(logEvents), blockTime), logEvents);
      continue;
    }
    const byKey = new Map<string, DomainEvent[]>();
    for (const ev of logEvents) {
      const k = foldKeyOf(ev);
      const list = byKey.get(k);
      if (list) list.push(ev);
      else byKey.set(k, [ev]);
    }
    // One row per log and token: a log may concern several tokens (ERC-1155 TransferBatch).
    for (const [k, list] of byKey) keep(entryOf(source, log, k, JSON.stringify(list), blockTime), list);
  }
  return out;
}

function entryOf(
  source: CrawlerSource,
  log: FetchedLog,
  tokenId: string,
  json: string,
  blockTime: number | null,
): JournalEntry {
  return {
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
}

// The events of entries decoded in this process, so that applying a range does not parse back the
// JSON it has just written.
const decoded = new WeakMap<JournalEntry, DomainEvent[]>();

/**
 * Appends the events of a journal entry, at its place on the chain, to `out`: `events` when the
 * caller holds them (decoded in this process), else parsed from the entry's JSON.
 */
export function pushEventsOf(entry: JournalEntry, out: JournalEvent[], events?: DomainEvent[]): void {
  const parsed = events ?? decoded.get(entry) ?? (JSON.parse(entry.event) as DomainEvent | DomainEvent[]);
  // No closure a call: this runs once an entry.
  if (Array.isArray(parsed)) for (const event of parsed) out.push(journalEvent(entry, event));
  else out.push(journalEvent(entry, parsed));
}

function journalEvent(entry: JournalEntry, event: DomainEvent): JournalEvent {
  return {
    event,
    blockNumber: entry.blockNumber,
    logIndex: entry.logIndex,
    blockTime: entry.blockTime ?? null,
    contract: entry.contract,
  };
}
