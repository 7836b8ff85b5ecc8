import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import type { RpcClient } from "../crawler/rpc-client.js";

export interface TxRequest {
  /** Absent: contract creation. */
  to?: Hex;
  data: Hex;
  /**
   * Explicit, because with mining paused a transaction that depends on an earlier unmined one
   * (a record set after its mint) cannot be estimated. Default {@link DEFAULT_GAS}.
   */
  gas?: bigint;
  /** Named in the error when the transaction reverts. */
  label?: string;
  /**
   * Sender other than the deployer (a name's owner, for the real contracts' access checks):
   * impersonated and funded on first use, nonces tracked per account.
   */
  from?: Hex;
  /** Wei sent along (a payable call, such as an ENS registration). */
  value?: bigint;
}

const DEFAULT_GAS = 5_000_000n;
/** JSON-RPC batch size for sends and receipts (measured here: ~50 a batch keeps anvil responsive). */
const BATCH = 50;
/** Hex characters of calldata per HTTP request: anvil refuses very large request bodies. */
const MAX_BATCH_BYTES = 1_000_000;

interface Receipt {
  status: Hex;
  blockNumber: Hex;
  logs: unknown[];
}

/**
 * Sends transactions from one unlocked dev account with explicit nonces, in JSON-RPC batches, and
 * mines them on demand. The node must not be automining (see {@link pauseMining}).
 *
 * @example
 * await sender.send([{ to: registry, data }]);
 * const { blockNumber } = await sender.mine({ timestamp: 1_700_000_000 });
 */
export interface TxSender {
  readonly rpc: RpcClient;
  readonly from: Hex;
  /** `track: false` leaves the receipts unchecked (interval-mined traffic, see simulate.ts). */
  send(txs: readonly TxRequest[], options?: { track?: boolean }): Promise<Hex[]>;
  /** Mines every pending transaction (at `timestamp`, seconds, when given) and checks each receipt. */
  mine(options?: {
    timestamp?: number;
  }): Promise<{ blockNumber: number; transactions: number; logs: number }>;
  /** Next nonce to be used. */
  readonly nonce: number;
}

export async function createTxSender(rpc: RpcClient, from: Hex): Promise<TxSender> {
  let nonce = Number(await rpc.call<Hex>("eth_getTransactionCount", [from, "pending"]));
  let pending: Array<{ hash: Hex; label: string }> = [];
  const others = new Map<string, number>();

  /** Next nonce of another account, impersonating and funding it the first time. */
  async function otherNonce(account: Hex): Promise<number> {
    const key = account.toLowerCase();
    let next = others.get(key);
    if (next === undefined) {
      await rpc.call("anvil_impersonateAccount", [account]);
      const balance = BigInt(await rpc.call<Hex>("eth_getBalance", [account, "latest"]));
      if (balance < 10n ** 18n) await rpc.call("anvil_setBalance", [account, "0x56bc75e2d63100000"]);
      next = Number(await rpc.call<Hex>("eth_getTransactionCount", [account, "pending"]));
    }
    others.set(key, next + 1);
    return next;
  }

  async function send(txs: readonly TxRequest[], options: { track?: boolean } = {}): Promise<Hex[]> {
    const track = options.track ?? true;
    const hashes: Hex[] = [];
    for (let i = 0; i < txs.length; ) {
      // At most BATCH requests and about MAX_BATCH_BYTES of calldata in one HTTP request.
      let end = i;
      let bytes = 0;
      while (
        end < txs.length &&
        end - i < BATCH &&
        (end === i || bytes + txs[end].data.length <= MAX_BATCH_BYTES)
      ) {
        bytes += txs[end].data.length;
        end++;
      }
      const chunk = txs.slice(i, end);
      i = end;
      const nonces: number[] = [];
      for (const tx of chunk) {
        nonces.push(
          tx.from && tx.from.toLowerCase() !== from.toLowerCase() ? await otherNonce(tx.from) : nonce++,
        );
      }
      const calls = chunk.map((tx, j) => ({
        method: "eth_sendTransaction",
        params: [
          {
            from: tx.from ?? from,
            ...(tx.to ? { to: tx.to } : {}),
            data: tx.data,
            gas: `0x${(tx.gas ?? DEFAULT_GAS).toString(16)}`,
            nonce: `0x${nonces[j].toString(16)}`,
            ...(tx.value ? { value: `0x${tx.value.toString(16)}` } : {}),
          },
        ],
      }));
      const result = await rpc.batch<Hex>(calls);
      result.forEach((hash, j) => {
        hashes.push(hash);
        if (track) pending.push({ hash, label: chunk[j].label ?? `tx ${nonces[j]}` });
      });
    }
    return hashes;
  }

  async function mine(options: { timestamp?: number } = {}) {
    const sent = pending;
    pending = [];
    await rpc.call("evm_mine", options.timestamp === undefined ? [] : [{ timestamp: options.timestamp }]);
    // A block holds what fits its gas limit; keep mining until the pool is empty.
    for (let guard = 0; ; guard++) {
      const status = await rpc.call<{ pending: Hex; queued: Hex }>("txpool_status");
      if (Number(status.pending) === 0 && Number(status.queued) === 0) break;
      if (guard > 1000) throw new AppError("INTERNAL_ERROR", `${rpc.url}: transactions stay in the pool`);
      await rpc.call("evm_mine");
    }
    let logs = 0;
    let blockNumber = 0;
    const failed: string[] = [];
    for (let i = 0; i < sent.length; i += BATCH * 2) {
      const chunk = sent.slice(i, i + BATCH * 2);
      const receipts = await rpc.batch<Receipt | null>(
        chunk.map((p) => ({ method: "eth_getTransactionReceipt", params: [p.hash] })),
      );
      receipts.forEach((r, j) => {
        if (!r) failed.push(`${chunk[j].label} (${chunk[j].hash}: not mined)`);
        else if (r.status !== "0x1") failed.push(`${chunk[j].label} (${chunk[j].hash})`);
        else {
          logs += r.logs.length;
          blockNumber = Math.max(blockNumber, Number(r.blockNumber));
        }
      });
    }
    if (failed.length > 0) {
      throw new AppError(
        "INTERNAL_ERROR",
        `${failed.length} devnet transaction(s) reverted: ${failed.slice(0, 5).join("; ")}`,
        {
          details: { failed },
        },
      );
    }
    if (sent.length === 0) blockNumber = Number(await rpc.call<Hex>("eth_blockNumber"));
    return { blockNumber, transactions: sent.length, logs };
  }

  return {
    rpc,
    from,
    send,
    mine,
    get nonce() {
      return nonce;
    },
  };
}

/** Stops automatic and interval mining, so that transactions wait for {@link TxSender.mine}. */
export async function pauseMining(rpc: RpcClient): Promise<void> {
  await rpc.call("evm_setAutomine", [false]);
  await rpc.call("evm_setIntervalMining", [0]);
}

/** Restores the devnet's mining mode: a block every `blockTime` seconds, or automine when 0. */
export async function resumeMining(rpc: RpcClient, blockTime: number): Promise<void> {
  if (blockTime > 0) {
    await rpc.call("evm_setAutomine", [false]);
    await rpc.call("evm_setIntervalMining", [blockTime]);
  } else {
    await rpc.call("evm_setAutomine", [true]);
  }
}
