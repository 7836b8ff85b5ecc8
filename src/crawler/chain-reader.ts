import type { Provider } from "../domain/providers.js";
import { PART_REPLY_BYTES } from "./block-range.js";
import type { LogFilter, RawLog, SourceContracts } from "../providers/provider.js";
import { logDecoder } from "./decode-pool.js";
import { type FetchedLog, isDecodedBatch, logsOfBatch, type RpcLog, toFetchedLog } from "./log-batch.js";
import type { RpcClient } from "./rpc-client.js";
import { rpcError } from "./rpc-faults.js";

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Epoch seconds. */
  timestamp: number;
}

export type { FetchedLog } from "./log-batch.js";

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}

const toHex = (n: number) => `0x${n.toString(16)}`;
const SHRINKING = ["too-many-results", "response-too-large", "part-too-large", "timeout"] as const;

function toHeader(b: RpcBlock): BlockHeader {
  return {
    number: Number.parseInt(b.number, 16),
    hash: b.hash.toLowerCase(),
    parentHash: b.parentHash.toLowerCase(),
    timestamp: Number.parseInt(b.timestamp, 16),
  };
}

/** Chain order: block, then log index. */
function compareLogs(a: RawLog, b: RawLog): number {
  return a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
}

/** The reads the sync loop needs, over the raw JSON-RPC client (no ABI decoding here). */
export class ChainReader {
  constructor(
    readonly rpc: RpcClient,
    readonly chainId: number,
  ) {}

  async head(): Promise<number> {
    const n = await this.rpc.call<string>("eth_blockNumber", [], { nonNull: true });
    return Number.parseInt(n, 16);
  }

  async chainIdOfNode(): Promise<number> {
    return Number.parseInt(await this.rpc.call<string>("eth_chainId", [], { nonNull: true }), 16);
  }

  /** Headers of the given blocks, in the given order. A block the node does not have is retried. */
  async headers(numbers: number[]): Promise<BlockHeader[]> {
    const out: BlockHeader[] = [];
    for (let i = 0; i < numbers.length; i += 100) {
      const chunk = numbers.slice(i, i + 100);
      const blocks = await this.rpc.batch<RpcBlock>(
        chunk.map((n) => ({ method: "eth_getBlockByNumber", params: [toHex(n), false] })),
        { nonNull: true },
      );
      out.push(...blocks.map(toHeader));
    }
    return out;
  }

  async header(n: number): Promise<BlockHeader> {
    return (await this.headers([n]))[0];
  }

  /**
   * Every log of `filters` in [from, to], in chain order, without duplicates (two filters may
   * match one log). Range-shrinking faults are thrown at once so the caller can ask for less. With
   * `decode`, the replies are parsed and decoded by the decode worker (decode-pool.ts): the logs
   * carry their adapter's verdict instead of their topics and data.
   */
  async logs(
    filters: readonly LogFilter[],
    from: number,
    to: number,
    decode?: { provider: Provider; contracts: SourceContracts },
  ): Promise<FetchedLog[]> {
    const parse = decode
      ? (body: ArrayBuffer) => logDecoder.decode(body, { ...decode, chainId: this.chainId, from, to })
      : undefined;
    const replies = await Promise.all(
      filters.map((f) =>
        this.rpc.call<unknown>(
          "eth_getLogs",
          [
            {
              fromBlock: toHex(from),
              toBlock: toHex(to),
              ...(f.address ? { address: f.address } : {}),
              topics: [f.topic0],
            },
          ],
          // A range that can still shrink gives up at once; a single block can only be retried.
          // Several blocks answering far more than a part's aim shrink too: the density jumped
          // after the part was planned, and memory holds a bounded reply, not the chain's logs.
          {
            noRetry: to > from ? SHRINKING : [],
            nonNull: true,
            parse,
            maxBytes: to > from ? PART_REPLY_BYTES : undefined,
          },
        ),
      ),
    );
    const out: FetchedLog[] = [];
    const seen = filters.length > 1 ? new Set<string>() : null;
    const outside = (blockNumber: number) =>
      // A node that answers outside the asked range is broken or lying; never apply that.
      rpcError(`eth_getLogs: log of block ${blockNumber} outside ${from}-${to}`, {
        fault: "server",
        method: "eth_getLogs",
      });
    for (const reply of replies) {
      let logs: FetchedLog[];
      if (isDecodedBatch(reply)) {
        if (reply.outOfRange !== null) throw outside(reply.outOfRange);
        logs = logsOfBatch(reply, this.chainId);
      } else if (Array.isArray(reply)) {
        logs = [];
        for (const l of reply as RpcLog[]) {
          if (l.removed) continue;
          const log = toFetchedLog(l, this.chainId);
          if (log.blockNumber < from || log.blockNumber > to) throw outside(log.blockNumber);
          logs.push(log);
        }
      } else throw rpcError("eth_getLogs: not an array", { fault: "server", method: "eth_getLogs" });
      for (const log of logs) {
        if (seen) {
          const k = `${log.blockHash}:${log.logIndex}`;
          if (seen.has(k)) continue;
          seen.add(k);
        }
        out.push(log);
      }
    }
    if (filters.length > 1) out.sort(compareLogs);
    return out;
  }

  /**
   * The first block at which `address` has code, by bisection over eth_getCode (needs an archive
   * node). Used when a contract's deployment block is not published (docs/chain-facts.md).
   */
  async deployBlock(address: string, head: number): Promise<number | null> {
    const hasCode = async (n: number) =>
      ((await this.rpc.call<string>("eth_getCode", [address, toHex(n)])) ?? "0x").length > 2;
    if (!(await hasCode(head))) return null;
    let lo = 0;
    let hi = head;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (await hasCode(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
