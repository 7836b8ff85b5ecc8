import type { Hex } from "viem";
import type { Provider } from "../domain/providers.js";
import { callData, type EnsAddresses } from "./deploy.js";
import { unsCall } from "./real-uns.js";
import { resolverCalls } from "./seed-ens.js";
import type { DevnetChain } from "./seed.js";
import { namehash } from "./token-ids.js";
import { syntheticOwners } from "./synthetic-owners.js";
import type { TxRequest } from "./tx-sender.js";

export interface BulkSeedOptions {
  /** Names in total, spread evenly over every (provider, network) source of the chains. */
  names: number;
  /** Names per transaction (the registries' batch functions). */
  batchSize?: number;
  /** Distinguishes the names of successive runs, which would otherwise collide. */
  runId?: string;
}

export interface BulkSeedReport {
  names: number;
  transactions: number;
  blocks: number;
  /** Logs emitted, counted from the receipts. */
  events: number;
  durationMs: number;
}

const OWNERS: readonly Hex[] = syntheticOwners("bench", 9);
const TXS_PER_BLOCK = 10;

function batchTxs(
  provider: Provider,
  addresses: Record<string, string>,
  labels: string[],
  first: number,
): TxRequest[] {
  const owners = labels.map((_, i) => OWNERS[(first + i) % OWNERS.length]);
  const gas = 500_000n + BigInt(labels.length) * 400_000n;
  if (provider === "NAMESPACE_A") {
    const keys = labels.map(() => ["token.ETH.0", "redirect.WEBSITE.0"]);
    const values = labels.map((l, i) => [owners[i], `https://${l}.example.com`]);
    const tlds = labels.map(() => "bench");
    return [
      {
        to: addresses.registry as Hex,
        data: callData("FNSRegistry", "mintMany", [owners, labels, tlds, keys, values]),
        gas,
        label: `FNS bulk batch at ${first}`,
      },
    ];
  }
  if (provider === "NAMESPACE_B") {
    // The real MintingManager issues one name a transaction (no batch entry point): the batch is
    // that many transactions in the same block.
    return labels.map((l, i) => ({
      to: addresses.mintingManager as Hex,
      data: unsCall("MintingManager", "issueWithRecords", [
        owners[i],
        [l, "bench"],
        ["crypto.ETH.address", "browser.redirect_url"],
        [owners[i], `https://${l}.example.com`],
        false,
      ]),
      gas: 600_000n,
      label: `UNS bulk issue ${first + i}`,
    }));
  }
  const a = addresses as EnsAddresses;
  const expires = BigInt(Math.floor(Date.now() / 1000) + 365 * 86_400);
  const calls = labels.flatMap((l, i) =>
    resolverCalls(namehash(`${l}.eth`), [
      ["addr.60", owners[i]],
      ["text.url", `https://${l}.example.com`],
    ]),
  );
  return [
    {
      to: a.controller,
      data: callData("ETHRegistrarController", "registerMany", [
        labels,
        owners,
        labels.map(() => expires),
        a.resolver,
        labels.map((_, i) => (first + i) % 2 === 0),
      ]),
      gas: gas * 2n,
      label: `ENS bulk registrations at ${first}`,
    },
    {
      to: a.resolver,
      data: callData("PublicResolver", "multicall", [calls]),
      gas,
      label: `ENS bulk records at ${first}`,
    },
  ];
}

/**
 * Registers many names with two records each through the registries' batch functions, for
 * benchmark worlds (about 4 events a FNS/UNS name and 11 an ENS name). Mining must be paused;
 * the chains are written in parallel.
 */
export async function bulkSeed(
  chains: readonly DevnetChain[],
  options: BulkSeedOptions,
): Promise<BulkSeedReport> {
  const started = Date.now();
  const batchSize = options.batchSize ?? 100;
  const runId = options.runId ?? Date.now().toString(36);
  const sources = chains.flatMap((chain) =>
    (Object.keys(chain.contracts) as Provider[]).map((provider) => ({ chain, provider })),
  );
  const perSource = Math.ceil(options.names / Math.max(1, sources.length));
  const report: BulkSeedReport = { names: 0, transactions: 0, blocks: 0, events: 0, durationMs: 0 };

  await Promise.all(
    chains.map(async (chain) => {
      // One group per batch (a batch call, or a UNS batch's transactions); TXS_PER_BLOCK groups a block.
      const txs: TxRequest[][] = [];
      for (const { provider } of sources.filter((s) => s.chain === chain)) {
        const addresses = chain.contracts[provider]!.addresses;
        const tag = provider === "NAMESPACE_A" ? "f" : provider === "NAMESPACE_B" ? "u" : "e";
        for (let first = 0; first < perSource; first += batchSize) {
          const n = Math.min(batchSize, perSource - first);
          const labels = Array.from({ length: n }, (_, i) => `bench-${runId}-${tag}${first + i}`);
          txs.push(batchTxs(provider, addresses, labels, first));
          report.names += n;
        }
      }
      for (let i = 0; i < txs.length; i += TXS_PER_BLOCK) {
        await chain.sender.send(txs.slice(i, i + TXS_PER_BLOCK).flat());
        const mined = await chain.sender.mine();
        report.transactions += mined.transactions;
        report.events += mined.logs;
        report.blocks++;
      }
    }),
  );
  report.durationMs = Date.now() - started;
  return report;
}
