import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import type { Provider } from "../domain/providers.js";
import type { SourceContracts } from "../providers/provider.js";
import type { DevnetNetworkName, EnsAddresses } from "./deploy.js";
import { type SeedStep, type SeedWorld, toSeconds } from "./seed-plan.js";
import { planOffchainEns } from "./seed-ens-offchain.js";
import { planRealEnsDomain, realEnsChoices } from "./seed-ens-real.js";
import { planRegistryDomain } from "./seed-registry.js";
import { planCns, planUnsBurn, planUnsDomain } from "./seed-uns.js";
import type { UnsAddresses } from "./real-uns.js";
import type { TxSender } from "./tx-sender.js";

/** One running devnet chain, ready to receive transactions from the deployer. */
export interface DevnetChain {
  network: DevnetNetworkName;
  sender: TxSender;
  contracts: Partial<Record<Provider, SourceContracts>>;
}

export interface SeedReport {
  domains: number;
  blocks: number;
  transactions: number;
  logs: number;
  /** Steps mined later than their timestamp because the chain was already past it. */
  clamped: number;
  durationMs: number;
}

/**
 * The genesis timestamp (seconds) a fresh chain needs so that every registration of `world` can
 * be mined at its own `registeredAt`: two days before the first one.
 */
export function worldGenesisTimestamp(world: SeedWorld): number {
  let min = Date.now();
  for (const d of world.domains) min = Math.min(min, d.registeredAt);
  return toSeconds(min) - 2 * 86_400;
}

/** The transaction steps of one chain, in mining order. */
function planChain(chain: DevnetChain, world: SeedWorld): SeedStep[] {
  const domains = world.domains.filter((d) => d.network === chain.network);
  const choices = realEnsChoices(domains);
  const ensNames = new Map(domains.filter((d) => d.provider === "NAMESPACE_C").map((d) => [d.name, d]));
  const steps: SeedStep[] = [];
  for (const d of domains) {
    const source = chain.contracts[d.provider];
    if (!source) {
      throw new AppError(
        "INVALID_PARAMETER",
        `${d.provider} is not deployed on ${chain.network} (${d.name})`,
      );
    }
    if (d.provider === "NAMESPACE_C") {
      const a = source.addresses as EnsAddresses;
      steps.push(...planRealEnsDomain(d, a, choices.get(d.name)!, chain.sender.from, ensNames));
    } else if (d.provider === "NAMESPACE_B") {
      steps.push(...planUnsDomain(d, source.addresses as unknown as UnsAddresses));
    } else {
      steps.push(...planRegistryDomain(d, source.addresses.registry as Hex));
    }
  }
  const ens = chain.contracts.NAMESPACE_C?.addresses as EnsAddresses | undefined;
  if (world.ensOffchain && ens?.offchainResolver && chain.network === "ETHEREUM") {
    steps.push(...planOffchainEns(world.ensOffchain, ens.offchainResolver, ens, chain.sender.from));
  }
  const firstUns = domains.find((d) => d.provider === "NAMESPACE_B");
  const uns = chain.contracts.NAMESPACE_B?.addresses as unknown as UnsAddresses | undefined;
  if (firstUns && uns) {
    steps.push(...planUnsBurn(chain.network, uns, toSeconds(firstUns.registeredAt)));
    steps.push(...planCns(uns, toSeconds(firstUns.registeredAt)));
  }
  // Stable: steps at the same second keep world order (a registration before its updates).
  steps.sort((a, b) => a.at - b.at);
  const registered = new Set<string>();
  for (const s of steps) {
    if (s.requires && !registered.has(s.requires)) {
      throw new AppError("INVALID_PARAMETER", `${s.registers} is registered before its parent ${s.requires}`);
    }
    if (s.registers) registered.add(s.registers);
  }
  return steps;
}

/**
 * Writes a world on the chains through real transactions, each registration in a block at its
 * own `registeredAt` (so block timestamps are the registration dates the crawler records), the
 * history (transfers, resets) and reverse records ten minutes later, then one empty block at
 * wall-clock time so that the chain's clock is current again. Mining must be paused
 * (`pauseMining`); the chains are seeded in parallel.
 */
export async function seedWorld(chains: readonly DevnetChain[], world: SeedWorld): Promise<SeedReport> {
  const started = Date.now();
  const report: SeedReport = { domains: 0, blocks: 0, transactions: 0, logs: 0, clamped: 0, durationMs: 0 };
  await Promise.all(
    chains.map(async (chain) => {
      const steps = planChain(chain, world);
      // The real ENS contracts check who sends: owners send their own transactions (seed-ens-real.ts).
      if (chain.contracts.NAMESPACE_C) await chain.sender.rpc.call("anvil_autoImpersonateAccount", [true]);
      report.domains += world.domains.filter((d) => d.network === chain.network).length;
      const latest = await chain.sender.rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", [
        "latest",
        false,
      ]);
      let last = Number(latest.timestamp);
      for (let i = 0; i < steps.length; ) {
        // One block per distinct second.
        const at = steps[i].at;
        const txs = [];
        while (i < steps.length && steps[i].at === at) txs.push(...steps[i++].txs);
        const timestamp = Math.max(at, last + 1);
        if (timestamp !== at) report.clamped++;
        await chain.sender.send(txs);
        const mined = await chain.sender.mine({ timestamp });
        last = timestamp;
        report.blocks++;
        report.transactions += mined.transactions;
        report.logs += mined.logs;
      }
      await chain.sender.mine({ timestamp: Math.max(toSeconds(Date.now()), last + 1) });
      report.blocks++;
    }),
  );
  report.durationMs = Date.now() - started;
  return report;
}
