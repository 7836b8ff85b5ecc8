import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import type { DevnetNetworkName } from "../../src/devnet/deploy.js";

/**
 * One POLYGON devnet chain with our contracts deployed and nothing seeded, mined on demand
 * (blockTime 0), on a random port range so that test files running side by side do not meet. Its
 * manifest is written to `dataDir` (devnet.json), where `omniname crawl` finds it.
 */
export function startBareChain(dataDir: string): Promise<Devnet> {
  return startDevnet({
    dataDir,
    persist: false,
    seed: false,
    blockTime: 0,
    logs: false,
    networks: ["POLYGON"],
    basePort: 20_000 + Math.floor(Math.random() * 20_000),
  });
}

/** The devnet's chains of `networks`, seeded with the fixture world, mined on demand (as above). */
export function startSeededChains(dataDir: string, networks: DevnetNetworkName[]): Promise<Devnet> {
  return startDevnet({
    dataDir,
    persist: false,
    blockTime: 0,
    logs: false,
    networks,
    basePort: 20_000 + Math.floor(Math.random() * 20_000),
  });
}
