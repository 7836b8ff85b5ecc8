import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CrawlerSource } from "../crawler/crawler-source.js";
import { createSource } from "../crawler/sources.js";
import { AppError } from "../domain/errors.js";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { SourceContracts } from "../providers/provider.js";

/** One chain of the devnet: where to reach it and what is deployed on it. */
export interface DevnetNetwork {
  chainId: number;
  rpcUrl: string;
  /** SOLANA: the WebSocket endpoint (programSubscribe); the EVM chains serve both on `rpcUrl`. */
  wsUrl?: string;
  /** Provider → { addresses: role → address, startBlock }: the crawler's `SourceContracts`. */
  contracts: Partial<Record<Provider, SourceContracts>>;
  /**
   * The hash of block 0: what tells this chain from another devnet's on the same port (every
   * devnet deploys to the same addresses). A manifest without it is not taken as running.
   * SOLANA: what its getGenesisHash answers (a random one per fresh devnet).
   */
  genesisHash?: string;
  /**
   * The timestamp of block 0 (seconds). anvil mints a genesis block of its own when it starts,
   * even with `--load-state`, and its next dump holds both blocks 0: a resumed chain is started
   * with this timestamp, so that its own genesis is the same block (same hash) as the saved one.
   */
  genesisTimestamp?: number;
}

/**
 * DATA_DIR/devnet.json: what the crawler reads to index the local chains.
 *
 * @example
 * { "networks": { "ETHEREUM": { "chainId": 1, "rpcUrl": "http://127.0.0.1:8545",
 *   "contracts": { "NAMESPACE_C": { "addresses": { "registry": "0x…", … }, "startBlock": 1 } } } } }
 */
export interface DevnetManifest {
  version: 1;
  /** The dev account that deployed and owns minting rights on every registry. */
  deployer: string;
  createdAt: string;
  /**
   * `artifactsFingerprint()` of the contracts deployed (artifacts.ts). A saved devnet of another
   * build, or without one (an older version), is redeployed rather than resumed.
   */
  build?: string;
  /** What was seeded: "fixtures" (the fixture world), "bulk" names, or nothing. */
  seed: { fixtures: number; bulk: number };
  networks: Partial<Record<Network, DevnetNetwork>>;
  /** The ENS offchain resolver and its CCIP-Read gateway (absent when ETHEREUM is not run). */
  ensOffchain?: DevnetEnsOffchain;
}

/**
 * The devnet's ENS offchain resolver (contracts/ens-offchain/OffchainResolver.sol) and the gateway
 * it sends clients to (src/devnet/ens-gateway.ts), which `startDevnet` runs on 127.0.0.1 on the
 * port after the chains'.
 */
export interface DevnetEnsOffchain {
  network: "ETHEREUM";
  /** Lower-case address of the OffchainResolver. */
  resolver: string;
  /** The EIP-3668 URL template the resolver names: `http://127.0.0.1:<port>/{sender}/{data}.json`. */
  gatewayUrl: string;
  /** The gateway's signer (the address the resolver trusts) and its key: a devnet-only key. */
  signer: string;
  signerKey: string;
}

const DEVNET_FILE = "devnet.json";

export function devnetManifestPath(dataDir: string): string {
  return join(dataDir, DEVNET_FILE);
}

/** The manifest of `dataDir`, or null when there is none. */
export function findDevnetManifest(dataDir: string): DevnetManifest | null {
  const path = devnetManifestPath(dataDir);
  if (!existsSync(path)) return null;
  try {
    const m = JSON.parse(readFileSync(path, "utf8")) as DevnetManifest;
    return m && typeof m === "object" && m.networks ? m : null;
  } catch (e) {
    throw new AppError("INTERNAL_ERROR", `${path} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
}

export function writeDevnetManifest(dataDir: string, manifest: DevnetManifest): string {
  mkdirSync(dataDir, { recursive: true });
  const path = devnetManifestPath(dataDir);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(tmp, path);
  return path;
}

/**
 * The storage resolvers of the devnet, per network: the resolvers whose records the crawler
 * indexes from their events (the two PublicResolver deployments, real-ens.ts), lower case. Any
 * other resolver (the OffchainResolver, `manifest.ensOffchain.resolver`) is answered live.
 *
 * @example knownStorageResolvers(manifest) // { ETHEREUM: ["0x…resolver", "0x…oldResolver"] }
 */
export function knownStorageResolvers(manifest: DevnetManifest): Partial<Record<Network, string[]>> {
  const out: Partial<Record<Network, string[]>> = {};
  for (const [network, net] of Object.entries(manifest.networks) as Array<[Network, DevnetNetwork]>) {
    const a = net.contracts.NAMESPACE_C?.addresses;
    if (!a) continue;
    out[network] = [a.resolver, a.oldResolver].filter((r): r is string => !!r).map((r) => r.toLowerCase());
  }
  return out;
}

/**
 * Every (provider, network) source of a devnet manifest that the EVM crawler reads: SOLANA is not
 * one (its SNS source runs beside the crawler: `solanaOfManifest`).
 */
export function sourcesFromManifest(manifest: DevnetManifest): CrawlerSource[] {
  const out: CrawlerSource[] = [];
  for (const [network, net] of Object.entries(manifest.networks) as Array<[Network, DevnetNetwork]>) {
    if (network === "SOLANA") continue;
    // The devnet's chain ids are the mainnet ones (docs/chain-facts.md); a manifest may still say
    // otherwise, and the node is asked at start-up.
    for (const [provider, contracts] of Object.entries(net.contracts) as Array<[Provider, SourceContracts]>)
      out.push(createSource(provider, network, contracts, net.rpcUrl, net.chainId));
  }
  return out;
}

/** The devnet's Solana endpoint (HTTP and WebSocket), or null when the manifest has none. */
export function solanaOfManifest(manifest: DevnetManifest): { rpcUrl: string; wsUrl: string } | null {
  const net = manifest.networks.SOLANA;
  if (!net) return null;
  return { rpcUrl: net.rpcUrl, wsUrl: net.wsUrl ?? net.rpcUrl.replace(/^http/, "ws") };
}
