import type { Hex, LogFilter, RawLog } from "../providers/provider.js";
import { rpcError, type RpcClient } from "./rpc-client.js";

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Epoch seconds. */
  timestamp: number;
}

/** A log as fetched, with the block time when the node includes it (anvil, recent geth/reth). */
export interface FetchedLog extends RawLog {
  blockTime: number | null;
}

interface RpcLog {
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

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}

const toHex = (n: number) => `0x${n.toString(16)}`;
const SHRINKING = ["too-many-results", "response-too-large", "timeout"] as const;

function toHeader(b: RpcBlock): BlockHeader {
  return {
    number: Number.parseInt(b.number, 16),
    hash: b.hash.toLowerCase(),
    parentHash: b.parentHash.toLowerCase(),
    timestamp: Number.parseInt(b.timestamp, 16),
  };
}

/** Chain order: block, then log index. */
export function compareLogs(a: RawLog, b: RawLog): number {
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
   * match one log). Range-shrinking faults are thrown at once so the caller can ask for less.
   */
  async logs(filters: readonly LogFilter[], from: number, to: number): Promise<FetchedLog[]> {
    const replies = await Promise.all(
      filters.map((f) =>
        this.rpc.call<RpcLog[]>(
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
          { noRetry: to > from ? SHRINKING : [], nonNull: true },
        ),
      ),
    );
    const out: FetchedLog[] = [];
    const seen = filters.length > 1 ? new Set<string>() : null;
    for (const reply of replies) {
      if (!Array.isArray(reply))
        throw rpcError("eth_getLogs: not an array", { fault: "server", method: "eth_getLogs" });
      for (const l of reply) {
        if (l.removed) continue;
        const blockNumber = Number.parseInt(l.blockNumber, 16);
        if (blockNumber < from || blockNumber > to) {
          // A node that answers outside the asked range is broken or lying; never apply that.
          throw rpcError(`eth_getLogs: log of block ${blockNumber} outside ${from}-${to}`, {
            fault: "server",
            method: "eth_getLogs",
          });
        }
        const logIndex = Number.parseInt(l.logIndex, 16);
        if (seen) {
          const k = `${l.blockHash}:${logIndex}`;
          if (seen.has(k)) continue;
          seen.add(k);
        }
        out.push({
          chainId: this.chainId,
          blockNumber,
          blockHash: l.blockHash.toLowerCase() as Hex,
          logIndex,
          transactionHash: l.transactionHash,
          address: l.address.toLowerCase(),
          topics: l.topics,
          data: l.data,
          blockTime: l.blockTimestamp ? Number.parseInt(l.blockTimestamp, 16) : null,
        });
      }
    }
    if (filters.length > 1) out.sort(compareLogs);
    return out;
  }

  /**
   * The first block at which `address` has code, by bisection over eth_getCode (needs an archive
   * node). Used when a contract's deployment block is unknown (FNS, chain-facts.md).
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
