import { randomInt } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import { NETWORKS } from "../domain/networks.js";
import { type AnvilInstance, findFreePortRange, startAnvil } from "./anvil.js";
import { DEVNET_NETWORKS, type DevnetNetworkName } from "./deploy.js";
import { isGatewayFault, type GatewayFault } from "./ens-gateway.js";
import { type DevnetManifest, devnetManifestPath, findDevnetManifest } from "./manifest.js";
import { devnetRpc } from "./rpc.js";
import type { DevnetChain } from "./seed.js";
import { solanaStatePath } from "./solana-devnet.js";
import { createStateSaver, EMPTY_BLOCKS_SAVE_MS, type StateSaver } from "./state-saver.js";
import { createTxSender, resumeMining } from "./tx-sender.js";

/**
 * The devnet's chains as devnet.ts starts them: the anvil processes (fresh or from their state
 * files), the liveness check of a manifest, and the few calls around them.
 */

/** The deployer: anvil's dev account 0 (mnemonic "test test … junk"), minter of every registry. */
export const DEVNET_DEPLOYER: Hex = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";

export function anvilStatePath(dataDir: string, network: DevnetNetworkName): string {
  return join(dataDir, `anvil-${network.toLowerCase()}.json.gz`);
}

/** Removes the manifest first (until a new one is written, a crash leads to a fresh deploy), then every state file. */
export function clearDevnetState(dataDir: string): void {
  rmSync(devnetManifestPath(dataDir), { force: true });
  for (const n of DEVNET_NETWORKS) {
    rmSync(anvilStatePath(dataDir, n), { force: true });
    // The plain file of an older version, or of a start cut short while anvil loaded it.
    rmSync(anvilStatePath(dataDir, n).slice(0, -".gz".length), { force: true });
  }
  rmSync(solanaStatePath(dataDir), { force: true });
}

/**
 * The gateway fault of OMNINAME_DEVNET_GATEWAY_FAULT: a test hook for a devnet run in another
 * process (`npm start`), read here rather than in the config schema because it exists only for
 * the embedded devnet's failure tests.
 */
export function gatewayFaultFromEnv(): GatewayFault {
  const value = process.env.OMNINAME_DEVNET_GATEWAY_FAULT?.trim() || "none";
  if (!isGatewayFault(value))
    throw new AppError("INVALID_PARAMETER", `OMNINAME_DEVNET_GATEWAY_FAULT: unknown fault ${value}`);
  return value;
}

/** Sends one transaction from the deployer on a mining chain and waits for its receipt. */
export async function sendAndWait(rpcUrl: string, tx: { to: Hex; data: Hex }): Promise<void> {
  const rpc = devnetRpc(rpcUrl);
  const hash = await rpc.call<Hex>("eth_sendTransaction", [{ from: DEVNET_DEPLOYER, ...tx }]);
  for (let i = 0; i < 200; i++) {
    const receipt = await rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [hash]);
    if (receipt) {
      if (receipt.status !== "0x1") throw new AppError("INTERNAL_ERROR", `${hash} reverted`);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new AppError("INTERNAL_ERROR", `${hash} was not mined within 10 s`);
}

export function portOf(rpcUrl: string): number {
  return Number(new URL(rpcUrl).port);
}

/** Chains of a manifest as seeding/simulation targets (the deployer sends). */
export async function chainsOf(manifest: DevnetManifest): Promise<DevnetChain[]> {
  const out: DevnetChain[] = [];
  for (const network of DEVNET_NETWORKS) {
    const n = manifest.networks[network];
    if (!n) continue;
    const sender = await createTxSender(devnetRpc(n.rpcUrl), manifest.deployer as Hex);
    out.push({ network, sender, contracts: n.contracts });
  }
  return out;
}

/** The hash of block 0 of the chain at `rpcUrl`. */
async function genesisHashOf(rpcUrl: string, timeoutMs?: number): Promise<string> {
  const block = await devnetRpc(rpcUrl, { timeoutMs }).call<{ hash: string } | null>("eth_getBlockByNumber", [
    "0x0",
    false,
  ]);
  if (!block) throw new AppError("INTERNAL_ERROR", `${rpcUrl} has no block 0`);
  return block.hash.toLowerCase();
}

/**
 * A genesis timestamp of its own for each fresh devnet, up to a day before `base`: the genesis
 * hash is what tells two devnets apart, and chains with the same dev accounts and the same
 * genesis timestamp share it. A day earlier still leaves the deployment (an hour after genesis)
 * before the fixture world's first registration (two days after).
 */
export function uniqueGenesis(base: number): number {
  return base - randomInt(1, 86_400);
}

/**
 * True when every chain of the manifest answers with its chain id and genesis hash and has its
 * contracts (SOLANA: its genesis hash): the devnet of this manifest, not another one listening on
 * its ports.
 */
export async function isManifestLive(manifest: DevnetManifest): Promise<boolean> {
  for (const [network, n] of Object.entries(manifest.networks)) {
    if (!n) continue;
    // Without a recorded genesis, nothing tells this devnet from another on the same ports.
    if (!n.genesisHash) return false;
    try {
      const rpc = devnetRpc(n.rpcUrl, { timeoutMs: 2_000 });
      if (network === "SOLANA") {
        if ((await rpc.call<string>("getGenesisHash")) !== n.genesisHash) return false;
        continue;
      }
      if (Number(await rpc.call<Hex>("eth_chainId")) !== n.chainId) return false;
      if ((await genesisHashOf(n.rpcUrl, 2_000)) !== n.genesisHash.toLowerCase()) return false;
      for (const source of Object.values(n.contracts)) {
        const code = await rpc.call<Hex>("eth_getCode", [source!.addresses.registry, "latest"]);
        if (code === "0x") return false;
      }
    } catch {
      return false;
    }
  }
  return true;
}

/** The devnet of `dataDir` when it is up (another process runs it), else null. */
export async function findRunningDevnet(dataDir: string): Promise<DevnetManifest | null> {
  const manifest = findDevnetManifest(dataDir);
  return manifest && (await isManifestLive(manifest)) ? manifest : null;
}

export interface LaunchOptions {
  dataDir: string;
  networks: readonly DevnetNetworkName[];
  base: number;
  blockTime: number;
  persist: boolean;
  logs: boolean;
  /** Per network, the genesis timestamp to start with (a resumed chain's saved one, or a fresh one). */
  genesisOf: (network: DevnetNetworkName) => number | undefined;
}

/**
 * Starts one anvil per network on consecutive ports from `base`, into `anvils` (so that the caller
 * can stop those that started when another fails), mining nothing until told: a fresh chain until
 * seeded (an interval block would jump the clock past the historical registration dates), a
 * resumed one until its loaded head is read.
 */
/** Whether `e` (or a cause of it) says a port was taken: by another process, between probe and bind. */
export function isPortTaken(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c && depth < 8; c = (c as { cause?: unknown }).cause, depth++) {
    if ((c as NodeJS.ErrnoException).code === "EADDRINUSE") return true;
    if (/address already in use|EADDRINUSE/i.test(String((c as Error).message ?? ""))) return true;
  }
  return false;
}

/**
 * Binds `count` consecutive ports from `first` with `bind`; when another process took one between
 * the probe (findFreePortRange) and the bind, as two `omniname start` at once can, probes again past
 * it and retries, up to `attempts` times. Any other failure is thrown at once.
 */
export async function onFreePorts<T>(
  first: number,
  count: number,
  bind: (port: number) => Promise<T>,
  attempts = 5,
): Promise<T> {
  let port = first;
  for (let attempt = 1; ; attempt++) {
    try {
      return await bind(port);
    } catch (e) {
      if (attempt >= attempts || !isPortTaken(e)) throw e;
      port = await findFreePortRange(count, port + count);
    }
  }
}

export async function launchAnvils(
  o: LaunchOptions,
  anvils: Partial<Record<DevnetNetworkName, AnvilInstance>>,
): Promise<void> {
  // allSettled: a failure must not leave a sibling that is still starting unaccounted for.
  const results = await Promise.allSettled(
    o.networks.map(async (network, i) => {
      anvils[network] = await startAnvil({
        chainId: NETWORKS[network].chainId,
        port: o.base + i,
        noMining: true,
        blockTime: o.blockTime,
        statePath: o.persist ? anvilStatePath(o.dataDir, network) : undefined,
        genesisTimestamp: o.genesisOf(network),
        logPath: o.logs ? join(o.dataDir, `anvil-${network.toLowerCase()}.log`) : undefined,
      });
    }),
  );
  const failed = results.find((r) => r.status === "rejected");
  if (failed) {
    // None left running: the caller may retry on other ports (onFreePorts).
    await Promise.all(o.networks.map((n) => anvils[n]?.stop(2_000)));
    for (const n of o.networks) delete anvils[n];
    throw (failed as PromiseRejectedResult).reason;
  }
}

/**
 * Puts resumed chains back to work: reads each loaded head, moves anvil's clock back onto the wall
 * clock (never behind the loaded head: started with its saved genesis timestamp, it would run on
 * from there), makes its state saver and resumes mining.
 */
export async function resumeChains(
  anvils: Partial<Record<DevnetNetworkName, AnvilInstance>>,
  networks: readonly DevnetNetworkName[],
  dataDir: string,
  blockTime: number,
): Promise<{
  heads: Partial<Record<DevnetNetworkName, number>>;
  savers: Partial<Record<DevnetNetworkName, StateSaver>>;
}> {
  const heads: Partial<Record<DevnetNetworkName, number>> = {};
  const savers: Partial<Record<DevnetNetworkName, StateSaver>> = {};
  for (const n of networks) {
    const rpc = devnetRpc(anvils[n]!.rpcUrl);
    heads[n] = Number(await rpc.call<Hex>("eth_blockNumber"));
    const latest = await rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    const now = Math.floor(Date.now() / 1000);
    await rpc.call("anvil_setTime", [Math.max(now, Number(latest.timestamp) + 1)]);
    savers[n] = createStateSaver(rpc, anvilStatePath(dataDir, n), heads[n], {
      emptyBlocksSaveMs: EMPTY_BLOCKS_SAVE_MS,
    });
    await resumeMining(rpc, blockTime);
  }
  return { heads, savers };
}
