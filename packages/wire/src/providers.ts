import type { Network } from "./networks.js";

/**
 * The naming providers. The wire value is the spec's neutral identifier; `protocol` is the
 * registry family the adapter speaks (docs/chain-facts.md).
 */
export const PROVIDERS = {
  NAMESPACE_A: {
    protocol: "FNS",
    label: "Freename",
    networks: ["POLYGON", "BSC", "AURORA"],
    comingSoon: false,
    aliases: ["FNS", "FREENAME"],
  },
  NAMESPACE_B: {
    protocol: "UNS",
    label: "Unstoppable Domains",
    networks: ["ETHEREUM", "POLYGON"],
    comingSoon: false,
    aliases: ["UNS", "UNSTOPPABLE_DOMAINS", "UNSTOPPABLE", "UD"],
  },
  NAMESPACE_C: {
    protocol: "ENS",
    label: "Ethereum Name Service",
    networks: ["ETHEREUM"],
    comingSoon: false,
    aliases: ["ENS"],
  },
  NAMESPACE_D: {
    protocol: "SNS",
    label: "Solana Name Service",
    networks: ["SOLANA"],
    comingSoon: false,
    aliases: ["SNS", "SOLANA_NAME_SERVICE"],
  },
} as const satisfies Record<
  string,
  {
    protocol: string;
    label: string;
    networks: readonly Network[];
    comingSoon: boolean;
    aliases: readonly string[];
  }
>;

export type Provider = keyof typeof PROVIDERS;
export type Protocol = (typeof PROVIDERS)[Provider]["protocol"];

/** Deterministic order used to break ties (docs/scoring.md). */
export const PROVIDER_ORDER: readonly Provider[] = [
  "NAMESPACE_A",
  "NAMESPACE_B",
  "NAMESPACE_C",
  "NAMESPACE_D",
];

const byAlias = new Map<string, Provider>();
for (const p of PROVIDER_ORDER) {
  byAlias.set(p, p);
  for (const a of PROVIDERS[p].aliases) byAlias.set(a, p);
}

/** Parses a wire value, protocol name or alias; `null` when unknown. */
export function findProvider(input: string): Provider | null {
  return (
    byAlias.get(
      input
        .trim()
        .toUpperCase()
        .replace(/[\s-]+/g, "_"),
    ) ?? null
  );
}

export function isProvider(value: string): value is Provider {
  return Object.hasOwn(PROVIDERS, value);
}

export function providerOfProtocol(protocol: Protocol): Provider {
  for (const p of PROVIDER_ORDER) if (PROVIDERS[p].protocol === protocol) return p;
  throw new Error(`unknown protocol ${protocol}`);
}

/** The (provider, network) pairs that can hold domains today. */
export function activePairs(): Array<{ provider: Provider; network: Network }> {
  const out: Array<{ provider: Provider; network: Network }> = [];
  for (const p of PROVIDER_ORDER) {
    if (PROVIDERS[p].comingSoon) continue;
    for (const n of PROVIDERS[p].networks) out.push({ provider: p, network: n });
  }
  return out;
}
