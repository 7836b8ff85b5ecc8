import type { DomainEvent, Hex, ProviderAdapter, RawLog, SourceContracts } from "../providers/provider.js";

/**
 * eth_getLogs replies as the crawler reads them: the node's JSON log → FetchedLog, and, for the
 * decode worker (decode-worker.ts), a whole reply decoded into a compact batch that crosses the
 * thread boundary cheaply (typed arrays and string arrays clone at ~0.2 µs a log, objects at
 * ~3-6 µs here), then turned back into FetchedLogs that carry their decoded events.
 */

/** A log as the node sends it. */
export interface RpcLog {
  address: string;
  topics: Hex[];
  data: Hex;
  blockNumber: string;
  blockHash: Hex;
  logIndex: string;
  transactionHash: Hex;
  blockTimestamp?: string;
  removed?: boolean;
}

/** What the decode worker made of a log: its events (and their JSON), or why it was refused. */
export type PreDecoded = { ok: true; events: DomainEvent[]; json: string } | { ok: false; reason: string };

/** A log as fetched, with the block time when the node includes it (anvil, recent geth/reth). */
export interface FetchedLog extends RawLog {
  blockTime: number | null;
  /**
   * Set when the log was decoded off the main thread: `topics` and `data` are then not carried
   * (empty), the adapter's verdict is here.
   */
  decoded?: PreDecoded;
}

/** The node's log as a FetchedLog (hashes and address lower case). */
export function toFetchedLog(l: RpcLog, chainId: number): FetchedLog {
  return {
    chainId,
    blockNumber: Number.parseInt(l.blockNumber, 16),
    blockHash: l.blockHash.toLowerCase() as Hex,
    logIndex: Number.parseInt(l.logIndex, 16),
    transactionHash: l.transactionHash,
    address: l.address.toLowerCase(),
    topics: l.topics,
    data: l.data,
    blockTime: l.blockTimestamp ? Number.parseInt(l.blockTimestamp, 16) : null,
  };
}

/** A decoded eth_getLogs reply, column by column; strings that repeat are stored once. */
export interface DecodedBatch {
  kind: "decoded-logs";
  /** The first block number outside the asked range, when the node sent one (never applied). */
  outOfRange: number | null;
  blockNumbers: Float64Array;
  logIndexes: Float64Array;
  /** NaN when the node sent no block time. */
  blockTimes: Float64Array;
  blockHashOf: Int32Array;
  txHashOf: Int32Array;
  addressOf: Int32Array;
  blockHashes: string[];
  txHashes: string[];
  addresses: string[];
  /** 1 when the adapter accepted the log. */
  ok: Uint8Array;
  /** The events' JSON when accepted, else the reason. */
  results: string[];
}

export function isDecodedBatch(v: unknown): v is DecodedBatch {
  return typeof v === "object" && v !== null && (v as DecodedBatch).kind === "decoded-logs";
}

/** Index of `value` in `list`, appended when new. */
function intern(value: string, list: string[], index: Map<string, number>): number {
  let i = index.get(value);
  if (i === undefined) {
    i = list.length;
    list.push(value);
    index.set(value, i);
  }
  return i;
}

/**
 * Decodes the logs of one eth_getLogs reply with `adapter`, as journalEntriesOf would on the main
 * thread (removed logs skipped, a throwing decoder is a refusal).
 */
export function decodeLogBatch(
  logs: readonly RpcLog[],
  adapter: ProviderAdapter,
  contracts: SourceContracts,
  chainId: number,
  range: { from: number; to: number },
): DecodedBatch {
  const kept = logs.filter((l) => !l.removed);
  const n = kept.length;
  const batch: DecodedBatch = {
    kind: "decoded-logs",
    outOfRange: null,
    blockNumbers: new Float64Array(n),
    logIndexes: new Float64Array(n),
    blockTimes: new Float64Array(n),
    blockHashOf: new Int32Array(n),
    txHashOf: new Int32Array(n),
    addressOf: new Int32Array(n),
    blockHashes: [],
    txHashes: [],
    addresses: [],
    ok: new Uint8Array(n),
    results: new Array<string>(n),
  };
  const hashIndex = new Map<string, number>();
  const txIndex = new Map<string, number>();
  const addressIndex = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const log = toFetchedLog(kept[i], chainId);
    if (batch.outOfRange === null && (log.blockNumber < range.from || log.blockNumber > range.to))
      batch.outOfRange = log.blockNumber;
    batch.blockNumbers[i] = log.blockNumber;
    batch.logIndexes[i] = log.logIndex;
    batch.blockTimes[i] = log.blockTime ?? Number.NaN;
    batch.blockHashOf[i] = intern(log.blockHash, batch.blockHashes, hashIndex);
    batch.txHashOf[i] = intern(log.transactionHash, batch.txHashes, txIndex);
    batch.addressOf[i] = intern(log.address, batch.addresses, addressIndex);
    let result: ReturnType<ProviderAdapter["decode"]>;
    try {
      result = adapter.decode(log, contracts);
    } catch (e) {
      result = { ok: false, reason: `decoder threw: ${(e as Error).message}` };
    }
    batch.ok[i] = result.ok ? 1 : 0;
    batch.results[i] = result.ok ? JSON.stringify(result.events) : result.reason;
  }
  return batch;
}

const NO_TOPICS: Hex[] = [];

/** The FetchedLogs of a decoded batch, each carrying its decoded events. */
export function logsOfBatch(batch: DecodedBatch, chainId: number): FetchedLog[] {
  const out = new Array<FetchedLog>(batch.blockNumbers.length);
  for (let i = 0; i < out.length; i++) {
    const time = batch.blockTimes[i];
    const result = batch.results[i];
    out[i] = {
      chainId,
      blockNumber: batch.blockNumbers[i],
      blockHash: batch.blockHashes[batch.blockHashOf[i]] as Hex,
      logIndex: batch.logIndexes[i],
      transactionHash: batch.txHashes[batch.txHashOf[i]] as Hex,
      address: batch.addresses[batch.addressOf[i]],
      topics: NO_TOPICS,
      data: "0x",
      blockTime: Number.isNaN(time) ? null : time,
      decoded:
        batch.ok[i] === 1
          ? { ok: true, events: JSON.parse(result) as DomainEvent[], json: result }
          : { ok: false, reason: result },
    };
  }
  return out;
}
