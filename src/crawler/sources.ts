import { AppError } from "../domain/errors.js";
import { NETWORKS, type Network } from "../domain/networks.js";
import { PROVIDERS, type Provider } from "../domain/providers.js";
import { ADAPTERS, adapterFor } from "../providers/adapters.js";
import type { SourceContracts } from "../providers/provider.js";
import type { CrawlerSource } from "./crawler-source.js";

/** `<protocol>-<network>` in lower case: the checkpoint and journal id of a source. */
export function sourceIdOf(provider: Provider, network: Network): string {
  return `${PROVIDERS[provider].protocol.toLowerCase()}-${network.toLowerCase()}`;
}

/**
 * The source of one provider's contracts on one network, read over `rpcUrl`. `chainId` defaults to
 * the network's (docs/chain-facts.md); the node is asked at start-up either way.
 *
 * @example createSource(adapter.provider, "POLYGON", contracts, "http://127.0.0.1:8546")
 */
export function createSource(
  provider: Provider,
  network: Network,
  contracts: SourceContracts,
  rpcUrl: string,
  chainId: number = NETWORKS[network].chainId,
): CrawlerSource {
  const adapter = adapterFor(provider);
  if (!adapter) throw new AppError("INTERNAL_ERROR", `no adapter for provider ${provider}`);
  return { id: sourceIdOf(provider, network), provider, network, chainId, adapter, contracts, rpcUrl };
}

/**
 * The sources of one real chain: every registered adapter's mainnet contracts on `network`
 * (docs/chain-facts.md), read over `rpcUrl`. A start block of 0 is found by bisecting eth_getCode.
 */
export function mainnetSources(network: Network, rpcUrl: string): CrawlerSource[] {
  const out: CrawlerSource[] = [];
  for (const adapter of ADAPTERS) {
    const contracts = adapter.mainnet[network];
    if (contracts)
      out.push({
        ...createSource(adapter.provider, network, contracts, rpcUrl),
        discoverStartBlock: contracts.startBlock === 0,
      });
  }
  return out;
}
