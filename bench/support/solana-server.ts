import type { Address } from "@solana/kit";
import { createSolanaLedger } from "../../src/devnet/solana-ledger.js";
import { startSolanaRpc } from "../../src/devnet/solana-rpc.js";
import { snsWallet } from "../../src/devnet/sns-fixtures.js";
import { createSnsWriter } from "../../src/devnet/sns-writer.js";
import { serveAsChild } from "./child-server.js";

// A child process: the devnet's Solana (LiteSVM behind our JSON-RPC) seeded with <names> `.sol`
// names `bench-<i>.sol` (each a name account and its reverse account) of 1,000 owners, so that the
// SNS bench's source runs in a process of its own and its peak RSS is its own. argv: <names>.
// Sends { port } over IPC once seeded.
const names = Number(process.argv[2]);
const ledger = createSolanaLedger();
const writer = createSnsWriter(ledger);
const owners: Address[] = Array.from({ length: 1000 }, (_, i) => snsWallet(`bench-${i}`));
for (let i = 0; i < names; i += 5000) {
  const batch = [];
  for (let j = i; j < Math.min(names, i + 5000); j++)
    batch.push({ name: `bench-${j}.sol`, owner: owners[j % owners.length] });
  writer.registerMany(batch);
}
const rpc = await startSolanaRpc(ledger);
serveAsChild(rpc.port, () => rpc.close());
