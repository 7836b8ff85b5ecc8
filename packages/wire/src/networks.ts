/**
 * The networks of the spec. Wire values are exact; input is matched case-insensitively. `chainId`
 * is the EVM chain id; SOLANA has none (0: its journal's chain id, never an EVM chain's).
 */
export const NETWORKS = {
  ETHEREUM: { chainId: 1, finality: 65, comingSoon: false, aliases: ["ETH", "MAINNET"] },
  POLYGON: { chainId: 137, finality: 200, comingSoon: false, aliases: ["MATIC"] },
  BSC: { chainId: 56, finality: 30, comingSoon: false, aliases: ["BNB", "BINANCE"] },
  AURORA: { chainId: 1313161554, finality: 30, comingSoon: false, aliases: [] },
  SOLANA: { chainId: 0, finality: 32, comingSoon: false, aliases: ["SOL"] },
} as const;

export type Network = keyof typeof NETWORKS;

/** Deterministic order used to break ties (docs/scoring.md). */
export const NETWORK_ORDER: readonly Network[] = ["ETHEREUM", "POLYGON", "BSC", "AURORA", "SOLANA"];

export const ACTIVE_NETWORKS: readonly Network[] = NETWORK_ORDER.filter((n) => !NETWORKS[n].comingSoon);

const byAlias = new Map<string, Network>();
for (const n of NETWORK_ORDER) {
  byAlias.set(n, n);
  for (const a of NETWORKS[n].aliases) byAlias.set(a, n);
}

/** Parses a wire value or alias; `null` when unknown. */
export function findNetwork(input: string): Network | null {
  return byAlias.get(input.trim().toUpperCase()) ?? null;
}

export function isNetwork(value: string): value is Network {
  return Object.hasOwn(NETWORKS, value);
}

/** The EVM network of a chain id; null for an unknown one (and for 0: SOLANA is not an EVM chain). */
export function networkByChainId(chainId: number): Network | null {
  if (chainId === 0) return null;
  for (const n of NETWORK_ORDER) if (NETWORKS[n].chainId === chainId && !NETWORKS[n].comingSoon) return n;
  return null;
}
