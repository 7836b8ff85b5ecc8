import type { Hex } from "viem";
import type { OffchainEnsWorld } from "./fixtures.js";
import { realCallData } from "./real-ens.js";
import type { RealRead } from "./verify-ens-real.js";
import { type RealEnsChoice, planRealEnsDomain } from "./seed-ens-real.js";
import { type SeedDomain, type SeedStep, UPDATE_DELAY, toSeconds } from "./seed-plan.js";
import { namehash } from "./token-ids.js";

/**
 * The offchain ENS names of a world on chain (fixtures.ts `ensOffchain`): each `.eth` name is
 * registered through the real controller with no records, as the seeder registers the others
 * (seed-ens-real.ts), and its owner then points it at the OffchainResolver (`setResolver` on the
 * NameWrapper when wrapped, on the registry when not). The records stay at the gateway.
 */
export function planOffchainEns(
  world: OffchainEnsWorld,
  offchainResolver: Hex,
  a: Parameters<typeof planRealEnsDomain>[1],
  deployer: Hex,
): SeedStep[] {
  const steps: SeedStep[] = [];
  for (const r of world.registered) {
    const d: SeedDomain = {
      provider: "NAMESPACE_C",
      network: "ETHEREUM",
      name: r.name,
      owner: r.owner,
      records: [],
      registeredAt: r.registeredAt,
      expiresAt: r.expiresAt,
      reverse: false,
    };
    const choice: RealEnsChoice = {
      via: "controller",
      wrapped: r.wrapped,
      renewed: false,
      resolverChange: false,
      reverse: false,
    };
    steps.push(...planRealEnsDomain(d, a, choice, deployer, new Map()));
    const node = namehash(r.name);
    steps.push({
      at: toSeconds(r.registeredAt) + UPDATE_DELAY,
      txs: [
        {
          from: r.owner as Hex,
          to: r.wrapped ? a.nameWrapper : a.registry,
          data: r.wrapped
            ? realCallData("NameWrapper", "setResolver", [node, offchainResolver])
            : realCallData("ENSRegistry", "setResolver", [node, offchainResolver]),
          gas: 200_000n,
          label: `ENS ${r.name}: resolver → OffchainResolver`,
        },
      ],
    });
  }
  return steps;
}

/** Differences between the chain and the offchain names of a world (empty = as seeded). */
export async function checkOffchainEns(
  read: RealRead,
  world: OffchainEnsWorld,
  registry: string,
  offchainResolver: string,
): Promise<string[]> {
  const out: string[] = [];
  for (const r of world.registered) {
    const resolver = String(
      await read("ENSRegistry", registry, "resolver", [namehash(r.name)]),
    ).toLowerCase();
    if (resolver !== offchainResolver.toLowerCase())
      out.push(`${r.name}: resolver ${resolver}, expected the OffchainResolver ${offchainResolver}`);
  }
  return out;
}
