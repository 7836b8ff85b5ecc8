import type { Draft } from "./fixture-values.js";

/** FNS names under Freename's `sol` TLD that the SNS world (sns-fixtures.ts) holds too. */
export const SNS_COLLISIONS = ["alice.sol", "bob.sol"] as const;

/**
 * The fixture world's FNS `.sol` names: the same names as SNS `.sol` names of the devnet's Solana,
 * so that resolving one shows a collision between two providers on two kinds of chain.
 */
export function snsCollisionDrafts(o: Record<string, string>): Draft[] {
  const [alice, bob] = SNS_COLLISIONS;
  return [
    {
      provider: "NAMESPACE_A",
      network: "POLYGON",
      name: alice,
      owner: o.alice,
      profile: { eth: [o.alice], website: ["https://alice-fns.example.com"], twitter: ["alice_fns"] },
    },
    {
      provider: "NAMESPACE_A",
      network: "BSC",
      name: bob,
      owner: o.bob,
      profile: { eth: [o.bob], website: ["https://bob-fns.example.com"] },
    },
  ];
}
