import type { Hex } from "viem";
import type { Provider } from "../domain/providers.js";
import { callData, type EnsAddresses } from "./deploy.js";
import { unsCall } from "./real-uns.js";
import { MIN_COMMITMENT_AGE } from "./real-ens.js";
import { controllerRegistration } from "./real-ens-transactions.js";
import type { DevnetChain } from "./seed.js";
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
/** ENS transactions are one name each: more of them fit a block. */
const ENS_TXS_PER_BLOCK = 100;

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
  throw new Error(`no batch function for ${provider}`);
}

/**
 * ENS has no batch registration: each name is a controller commit and, a minute later, its
 * `register` carrying the two records as resolver calls (real-ens-transactions.ts).
 */
function ensTxs(
  a: EnsAddresses,
  labels: string[],
  first: number,
): { commits: TxRequest[]; registers: TxRequest[] } {
  const commits: TxRequest[] = [];
  const registers: TxRequest[] = [];
  labels.forEach((l, i) => {
    const owner = OWNERS[(first + i) % OWNERS.length];
    const { commit, register } = controllerRegistration(a, l, owner, 365 * 86_400, a.resolver, [
      ["addr.60", owner],
      ["text.url", `https://${l}.example.com`],
    ]);
    commits.push(commit);
    registers.push(register);
  });
  return { commits, registers };
}

/**
 * Registers many names with two records each, for benchmark worlds: FNS through its batch
 * function, UNS one MintingManager issue per name (a batch's transactions in one block), ENS one
 * controller commit and register per name (about 4 events a FNS/UNS name and 10 an ENS name).
 * Mining must be paused (`pauseMining`): the chains are written in parallel, a batch a block. With
 * automine on, anvil mines each transaction of a batch as it comes, so the blocks are not the
 * batches, and a test that forgot the pause failed now and then with transactions left in the
 * pool; it is refused at once instead.
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
  for (const chain of chains) {
    if (await chain.sender.rpc.call<boolean>("anvil_getAutomine"))
      throw new Error(`bulkSeed: mining on ${chain.network} is not paused (call pauseMining first)`);
  }

  await Promise.all(
    chains.map(async (chain) => {
      // One group per batch (a batch call, or a UNS batch's transactions); TXS_PER_BLOCK groups a block.
      const txs: TxRequest[][] = [];
      // ENS: one transaction a name, ENS_TXS_PER_BLOCK a block.
      const commits: TxRequest[] = [];
      const registers: TxRequest[] = [];
      for (const { provider } of sources.filter((s) => s.chain === chain)) {
        const addresses = chain.contracts[provider]!.addresses;
        const tag = provider === "NAMESPACE_A" ? "f" : provider === "NAMESPACE_B" ? "u" : "e";
        for (let first = 0; first < perSource; first += batchSize) {
          const n = Math.min(batchSize, perSource - first);
          const labels = Array.from({ length: n }, (_, i) => `bench-${runId}-${tag}${first + i}`);
          if (provider === "NAMESPACE_C") {
            const ens = ensTxs(addresses as unknown as EnsAddresses, labels, first);
            commits.push(...ens.commits);
            registers.push(...ens.registers);
          } else txs.push(batchTxs(provider, addresses, labels, first));
          report.names += n;
        }
      }
      const mineAll = async (groups: TxRequest[][], perBlock: number) => {
        for (let i = 0; i < groups.length; i += perBlock) {
          await chain.sender.send(groups.slice(i, i + perBlock).flat());
          const mined = await chain.sender.mine();
          report.transactions += mined.transactions;
          report.events += mined.logs;
          report.blocks++;
        }
      };
      if (commits.length > 0) {
        await mineAll(
          commits.map((tx) => [tx]),
          ENS_TXS_PER_BLOCK,
        );
        // The controller takes a commitment only once it is MIN_COMMITMENT_AGE old.
        await chain.sender.rpc.call("evm_increaseTime", [MIN_COMMITMENT_AGE + 1]);
        await mineAll(
          registers.map((tx) => [tx]),
          ENS_TXS_PER_BLOCK,
        );
      }
      await mineAll(txs, TXS_PER_BLOCK);
    }),
  );
  report.durationMs = Date.now() - started;
  return report;
}
