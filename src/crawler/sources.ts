import type { Config } from "../config/config.schema.js";
import { AppError } from "../domain/errors.js";
import { NETWORKS, type Network } from "../domain/networks.js";
import { PROVIDERS, type Provider } from "../domain/providers.js";
import type { DevnetManifest } from "../devnet/manifest.js";
import { adapterFor } from "../providers/adapters.js";
import { ENS_MAINNET } from "../providers/ens/ens.adapter.js";
import { FNS_MAINNET } from "../providers/fns/fns.adapter.js";
import type { SourceContracts } from "../providers/provider.js";
import { UNS_MAINNET } from "../providers/uns/uns.adapter.js";
import type { CrawlerSource } from "./apply-range.js";

/** `fns-polygon`, `ens-ethereum`: the checkpoint and journal id of a source. */
export function sourceIdOf(provider: Provider, network: Network): string {
  return `${PROVIDERS[provider].protocol.toLowerCase()}-${network.toLowerCase()}`;
}

function source(
  provider: Provider,
  network: Network,
  contracts: SourceContracts,
  rpcUrl: string,
): CrawlerSource {
  const adapter = adapterFor(provider);
  if (!adapter) throw new AppError("INTERNAL_ERROR", `no adapter for provider ${provider}`);
  return {
    id: sourceIdOf(provider, network),
    provider,
    network,
    chainId: NETWORKS[network].chainId,
    adapter,
    contracts,
    rpcUrl,
  };
}

/** Every (provider, network) source of a devnet manifest (DATA_DIR/devnet.json). */
export function sourcesFromManifest(manifest: DevnetManifest): CrawlerSource[] {
  const out: CrawlerSource[] = [];
  for (const [network, net] of Object.entries(manifest.networks) as Array<
    [Network, NonNullable<DevnetManifest["networks"][Network]>]
  >) {
    for (const [provider, contracts] of Object.entries(net.contracts) as Array<[Provider, SourceContracts]>) {
      const s = source(provider, network, contracts, net.rpcUrl);
      // The devnet's chain ids are the mainnet ones (ETHEREUM 1, … in docs/chain-facts.md); a manifest
      // may still say otherwise, and the node is asked at start-up.
      out.push({ ...s, chainId: net.chainId });
    }
  }
  return out;
}

/** The mainnet contracts and start blocks of docs/chain-facts.md, per provider and network. */
export const MAINNET_CONTRACTS: Partial<Record<Provider, Partial<Record<Network, SourceContracts>>>> = {
  NAMESPACE_A: FNS_MAINNET,
  NAMESPACE_B: UNS_MAINNET,
  NAMESPACE_C: ENS_MAINNET,
};

const RPC_KEYS = {
  ETHEREUM: "rpcUrlEthereum",
  POLYGON: "rpcUrlPolygon",
  BSC: "rpcUrlBsc",
  AURORA: "rpcUrlAurora",
} as const satisfies Partial<Record<Network, keyof Config>>;

/** The networks with an RPC URL configured (RPC_URL_*), or [] for none. */
export function configuredNetworks(config: Config): Network[] {
  return (Object.keys(RPC_KEYS) as Array<keyof typeof RPC_KEYS>).filter((n) => Boolean(config[RPC_KEYS[n]]));
}

/** Sources of the real chains configured by RPC_URL_*, with the mainnet addresses as defaults. */
export function sourcesFromConfig(config: Config): CrawlerSource[] {
  const out: CrawlerSource[] = [];
  for (const network of configuredNetworks(config)) {
    const url = config[RPC_KEYS[network as keyof typeof RPC_KEYS]] as string;
    for (const provider of Object.keys(MAINNET_CONTRACTS) as Provider[]) {
      const contracts = MAINNET_CONTRACTS[provider]?.[network];
      if (contracts)
        out.push({
          ...source(provider, network, contracts, url),
          discoverStartBlock: contracts.startBlock === 0,
        });
    }
  }
  return out;
}

/** The finality window of a network from the configuration (FINALITY_*). */
export function finalityOf(config: Config, network: Network): number {
  switch (network) {
    case "ETHEREUM":
      return config.finalityEthereum;
    case "POLYGON":
      return config.finalityPolygon;
    case "BSC":
      return config.finalityBsc;
    case "AURORA":
      return config.finalityAurora;
    default:
      return NETWORKS[network].finality;
  }
}
