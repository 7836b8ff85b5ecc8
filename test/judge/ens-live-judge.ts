import { EnsPlugin, FetchRequest, JsonRpcProvider, Network } from "ethers6";
import type { DevnetManifest } from "../../src/devnet/manifest.js";

/**
 * ethers v6 as the judge of ENS live names: its fetches (its CCIP-Read gateway requests included)
 * reach nothing but 127.0.0.1 until `restore` is called.
 */
export function ethersLoopbackOnly(): { restore(): void } {
  const original = FetchRequest.createGetUrlFunc();
  FetchRequest.registerGetUrl(async (req, signal) => {
    if (new URL(req.url).hostname !== "127.0.0.1") throw new Error(`only 127.0.0.1, not ${req.url}`);
    return original(req, signal);
  });
  return { restore: () => FetchRequest.registerGetUrl(original) };
}

/** ethers' provider on the devnet's ETHEREUM chain, its EnsPlugin on the devnet's registry. */
export function ethersOnDevnet(manifest: DevnetManifest): JsonRpcProvider {
  const chain = manifest.networks.ETHEREUM!;
  const registry = chain.contracts.NAMESPACE_C!.addresses.registry as string;
  const network = new Network("omniname-devnet", chain.chainId);
  network.attachPlugin(new EnsPlugin(registry, chain.chainId));
  return new JsonRpcProvider(chain.rpcUrl, network, { staticNetwork: network });
}
