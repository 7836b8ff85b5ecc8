import WebSocket from "ws";
import { DEVNET_DEPLOYER } from "../../src/devnet/devnet.js";
import { unsCall } from "../../src/devnet/real-uns.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { createTxSender } from "../../src/devnet/tx-sender.js";

/**
 * Block mined → the API serves the name it minted, from outside a running `omniname start`: the
 * devnet mines on its own clock (interval mining, as `npm start` runs it), so each round sends a
 * mint through the real UNS MintingManager, notes when its block was announced over the node's
 * own `eth_subscribe("newHeads")` (the moment the crawler hears of it too), and asks the API for
 * the name every 5 ms until it answers 200. Returns the latencies, ms.
 */
export async function freshnessThroughApi(o: {
  rpcUrl: string;
  mintingManager: `0x${string}`;
  apiBase: string;
  apiKey: string;
  rounds: number;
  owner?: string;
}): Promise<number[]> {
  const owner = o.owner ?? "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
  const rpc = devnetRpc(o.rpcUrl);
  const announced = new Map<number, number>();
  const ws = new WebSocket(o.rpcUrl.replace(/^http/, "ws"));
  ws.on("message", (data) => {
    const at = performance.now();
    const msg = JSON.parse(data.toString()) as { method?: string; params?: { result?: { number?: string } } };
    const n = msg.params?.result?.number;
    if (msg.method === "eth_subscription" && n) announced.set(Number(n), at);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => {
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
      resolve();
    });
    ws.once("error", reject);
  });
  const sender = await createTxSender(rpc, DEVNET_DEPLOYER);
  const latencies: number[] = [];
  try {
    // One warm-up round (the first reads, the key cache), not counted.
    for (let round = -1; round < o.rounds; round++) {
      const name = `product${round + 1}x${Date.now()}.x`;
      const [hash] = await sender.send(
        [
          {
            to: o.mintingManager,
            data: unsCall("MintingManager", "issueWithRecords", [owner, name.split("."), [], [], false]),
          },
        ],
        { track: false },
      );
      let servedAt = 0;
      const url = `${o.apiBase}/svc/api/v1/resolve?domain=${name}`;
      for (const deadline = performance.now() + 30_000; performance.now() < deadline; ) {
        const res = await fetch(url, { headers: { "api-key": o.apiKey } });
        await res.arrayBuffer();
        if (res.status === 200) {
          servedAt = performance.now();
          break;
        }
        if (res.status !== 404) throw new Error(`${url} answered ${res.status}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      if (servedAt === 0) throw new Error(`${name} was not served within 30 s`);
      const receipt = await rpc.call<{ blockNumber: string; status: string } | null>(
        "eth_getTransactionReceipt",
        [hash],
      );
      if (receipt?.status !== "0x1") throw new Error(`the mint of ${name} failed`);
      const mined = announced.get(Number(receipt.blockNumber));
      if (mined === undefined) throw new Error(`block ${Number(receipt.blockNumber)} was not announced`);
      if (round >= 0) latencies.push(servedAt - mined);
    }
  } finally {
    ws.terminate();
  }
  return latencies;
}
