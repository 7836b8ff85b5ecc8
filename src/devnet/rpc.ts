import { createRpcClient, type RpcClient } from "../crawler/rpc-client.js";
import { AppError } from "../domain/errors.js";

/**
 * The devnet tooling's JSON-RPC client: the crawler's client (crawler/rpc-client.ts) without
 * retries, since a transaction sent again after a timeout would fail on its nonce, and with a
 * long timeout for state dumps of large chains.
 *
 * @example await devnetRpc(anvil.rpcUrl).call("evm_mine")
 */
export function devnetRpc(url: string, options: { timeoutMs?: number } = {}): RpcClient {
  return createRpcClient({ url, maxRetries: 0, timeoutMs: options.timeoutMs ?? 60_000 });
}

/** Polls until the node answers `eth_chainId` (or `deadline` passes). */
export async function waitForRpc(
  rpc: RpcClient,
  timeoutMs = 15_000,
  isDead: () => boolean = () => false,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (isDead()) throw new AppError("RPC_UNAVAILABLE", `${rpc.url}: the node exited before answering`);
    try {
      return Number(await rpc.call<string>("eth_chainId"));
    } catch (e) {
      if (Date.now() > deadline) {
        throw new AppError("RPC_UNAVAILABLE", `${rpc.url} did not answer within ${timeoutMs} ms`, {
          cause: e,
        });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
