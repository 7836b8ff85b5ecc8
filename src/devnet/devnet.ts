import { randomInt } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import { NETWORKS } from "../domain/networks.js";
import { type AnvilInstance, findFreePortRange, startAnvil } from "./anvil.js";
import { artifactsFingerprint, ensureArtifacts } from "./artifacts.js";
import { type BulkSeedReport, bulkSeed } from "./bulk-seed.js";
import { DEVNET_GATEWAY_KEY, DEVNET_GATEWAY_SIGNER } from "./ens-gateway-answer.js";
import { type EnsGateway, type GatewayFault, isGatewayFault, startEnsGateway } from "./ens-gateway.js";
import { DEVNET_NETWORKS, type DevnetNetworkName, callData, deployNetwork } from "./deploy.js";
import { fixtureWorld } from "./fixtures.js";
import {
  type DevnetManifest,
  type DevnetNetwork,
  devnetManifestPath,
  findDevnetManifest,
  writeDevnetManifest,
} from "./manifest.js";
import { devnetRpc } from "./rpc.js";
import { type DevnetChain, type SeedReport, seedWorld, worldGenesisTimestamp } from "./seed.js";
import type { SeedWorld } from "./seed-plan.js";
import { type SimulateOptions, type Simulation, startSimulation } from "./simulate.js";
import { createStateSaver, type StateSaver, startSaving } from "./state-saver.js";
import { createTxSender, pauseMining, resumeMining } from "./tx-sender.js";

export interface StartDevnetOptions {
  dataDir: string;
  /** Seconds between blocks once seeded; 0 = automine. Default 1. */
  blockTime?: number;
  /** Seed the fixture world (or `world`) on a fresh devnet. Default true. */
  seed?: boolean;
  world?: SeedWorld;
  /** Benchmark names to add with the batch functions on a fresh devnet. Default 0. */
  bulk?: number;
  /** First port to probe; the chains take consecutive ports. Default 8545. */
  basePort?: number;
  /** Keep chain state in DATA_DIR/anvil-<network>.json.gz so that a second start resumes. Default true. */
  persist?: boolean;
  /** Discard any previous devnet in DATA_DIR. */
  fresh?: boolean;
  networks?: readonly DevnetNetworkName[];
  /** Write anvil's output to DATA_DIR/anvil-<network>.log. Default true when persisting. */
  logs?: boolean;
  log?: (message: string) => void;
  /**
   * Called once a fresh devnet is deployed and seeded, before its manifest is written: whatever was
   * indexed from an earlier devnet of DATA_DIR belongs to chains that no longer exist. A crash
   * before the manifest is written deploys again (and calls this again) on the next start.
   */
  onFresh?: () => Promise<void>;
  /**
   * A fault the ENS gateway starts with (ens-gateway.ts, for failure tests); default: the
   * OMNINAME_DEVNET_GATEWAY_FAULT variable, else none.
   */
  gatewayFault?: GatewayFault;
}

export interface Devnet {
  readonly manifest: DevnetManifest;
  readonly manifestPath: string;
  readonly anvils: Readonly<Partial<Record<DevnetNetworkName, AnvilInstance>>>;
  /** True when an existing devnet was resumed from its state files (nothing deployed or seeded). */
  readonly resumed: boolean;
  readonly seedReport: SeedReport | null;
  readonly bulkReport: BulkSeedReport | null;
  /** Per network, the head of the saved state a resumed chain was loaded from. */
  readonly resumedHeads: Readonly<Partial<Record<DevnetNetworkName, number>>>;
  /**
   * The CCIP-Read gateway of the ENS OffchainResolver (on 127.0.0.1, the port after the chains'),
   * null when ETHEREUM is not run. Tests make it misbehave with `setFault`.
   */
  readonly ensGateway: EnsGateway | null;
  /**
   * The highest block of `network` that its state file holds (null without `persist`): blocks up
   * to it survive a crash of this process with the same hashes; later ones may not.
   */
  savedHead(network: string): number | null;
  /** Saves a chain's state through `block` (StateSaver.saveThrough); null without a saver. */
  saveThrough(network: string, block: number): Promise<number | null>;
  chains(): Promise<DevnetChain[]>;
  simulate(options: SimulateOptions): Promise<Simulation>;
  stop(): Promise<void>;
}

/** The deployer: anvil's dev account 0 (mnemonic "test test … junk"), minter of every registry. */
export const DEVNET_DEPLOYER: Hex = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
/** Milliseconds between state saves (longer when a save takes long: see state-saver.ts). */
const SAVE_INTERVAL_MS = 1_000;

function statePath(dataDir: string, network: DevnetNetworkName): string {
  return join(dataDir, `anvil-${network.toLowerCase()}.json.gz`);
}

/**
 * The gateway fault of OMNINAME_DEVNET_GATEWAY_FAULT: a test hook for a devnet run in another
 * process (`npm start`), read here rather than in the config schema because it exists only for
 * the embedded devnet's failure tests.
 */
function gatewayFaultFromEnv(): GatewayFault {
  const value = process.env.OMNINAME_DEVNET_GATEWAY_FAULT?.trim() || "none";
  if (!isGatewayFault(value))
    throw new AppError("INVALID_PARAMETER", `OMNINAME_DEVNET_GATEWAY_FAULT: unknown fault ${value}`);
  return value;
}

/** Sends one transaction from the deployer on a mining chain and waits for its receipt. */
async function sendAndWait(rpcUrl: string, tx: { to: Hex; data: Hex }): Promise<void> {
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

function portOf(rpcUrl: string): number {
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
function uniqueGenesis(base: number): number {
  return base - randomInt(1, 86_400);
}

/**
 * True when every chain of the manifest answers with its chain id and genesis hash and has its
 * contracts: the devnet of this manifest, not another one listening on its ports.
 */
export async function isManifestLive(manifest: DevnetManifest): Promise<boolean> {
  for (const n of Object.values(manifest.networks)) {
    if (!n) continue;
    // Without a recorded genesis, nothing tells this devnet from another on the same ports.
    if (!n.genesisHash) return false;
    try {
      const rpc = devnetRpc(n.rpcUrl, { timeoutMs: 2_000 });
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

/**
 * Starts one anvil per network, deploys the registries, seeds the fixture world (and optional
 * benchmark names) and writes DATA_DIR/devnet.json. With `persist` (the default) each chain's
 * state lives in DATA_DIR/anvil-<network>.json.gz (state-saver.ts): a second start on the same
 * DATA_DIR resumes those chains (same addresses, same history, no reseeding); when the manifest
 * exists but its state is gone, everything is redeployed and reseeded.
 */
export async function startDevnet(options: StartDevnetOptions): Promise<Devnet> {
  const log = options.log ?? (() => {});
  const persist = options.persist ?? true;
  const blockTime = options.blockTime ?? 1;
  const seed = options.seed ?? true;
  const world = () => options.world ?? fixtureWorld();
  const networks = options.networks ?? DEVNET_NETWORKS;
  // The ENS offchain resolver lives on ETHEREUM: its gateway runs with that chain.
  const withGateway = networks.includes("ETHEREUM");
  const { dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  await ensureArtifacts();

  // The manifest goes first: until a new one is written, a crash leads to a fresh deploy again.
  const clearState = () => {
    rmSync(devnetManifestPath(dataDir), { force: true });
    for (const n of DEVNET_NETWORKS) {
      rmSync(statePath(dataDir, n), { force: true });
      // The plain file of an older version, or of a start cut short while anvil loaded it.
      rmSync(statePath(dataDir, n).slice(0, -".gz".length), { force: true });
    }
  };
  let previous = options.fresh ? null : findDevnetManifest(dataDir);
  if (previous && (await isManifestLive(previous))) {
    const ports = Object.values(previous.networks)
      .map((n) => (n ? new URL(n.rpcUrl).port : ""))
      .filter((p) => p !== "");
    throw new AppError(
      "INVALID_PARAMETER",
      `a devnet of ${dataDir} is already running (${devnetManifestPath(dataDir)}): another omniname ` +
        `uses this DATA_DIR, or one was killed alone on a machine without setpriv and left ` +
        `its anvil processes on ports ${ports.join(", ")}: stop those, or use another DATA_DIR`,
    );
  }
  const hasState = persist && networks.every((n) => existsSync(statePath(dataDir, n)));
  // Saved chains hold the contracts of the build that deployed them: another build (a contract
  // changed since) is redeployed, or the chains would go on running the old bytecode.
  const build = artifactsFingerprint();
  const sameBuild = previous?.build === build;
  if (previous && hasState && !sameBuild)
    log("the devnet's contracts changed since it was deployed: redeploying");
  if (!previous || !hasState || !sameBuild || networks.some((n) => !previous?.networks[n])) {
    previous = null;
    clearState();
  }

  // Prefer the ports of the previous run, so that URLs in other configs stay valid.
  let base = options.basePort ?? 8545;
  if (previous) base = portOf(previous.networks[networks[0]]!.rpcUrl);
  base = await findFreePortRange(networks.length + (withGateway ? 1 : 0), base);

  const anvils: Partial<Record<DevnetNetworkName, AnvilInstance>> = {};
  const savers: Partial<Record<DevnetNetworkName, StateSaver>> = {};
  let saving: { stop(): Promise<void> } | null = null;
  let gateway: EnsGateway | null = null;
  const stopAll = async () => {
    // The last save before the chains go: a stop loses nothing (a failed save is logged inside).
    await saving?.stop();
    saving = null;
    await gateway?.stop();
    gateway = null;
    await Promise.all(Object.values(anvils).map((a) => a?.stop(10_000)));
  };
  const saveAll = () => Promise.all(Object.values(savers).map((s) => s?.save()));
  const launch = async (fresh: boolean) => {
    const genesis = fresh
      ? uniqueGenesis(seed ? worldGenesisTimestamp(world()) : Math.floor(Date.now() / 1000))
      : undefined;
    // allSettled: a failure must not leave a sibling that is still starting unaccounted for.
    const results = await Promise.allSettled(
      networks.map(async (network, i) => {
        anvils[network] = await startAnvil({
          chainId: NETWORKS[network].chainId,
          port: base + i,
          // No mining until told: a fresh chain until seeded (an interval block would jump the clock
          // past the historical registration dates), a resumed one until its loaded head is read.
          noMining: true,
          blockTime,
          statePath: persist ? statePath(dataDir, network) : undefined,
          // A resumed chain restarts with its saved genesis timestamp (see DevnetNetwork).
          genesisTimestamp: fresh ? genesis : previous?.networks[network]?.genesisTimestamp,
          logPath:
            (options.logs ?? persist) ? join(dataDir, `anvil-${network.toLowerCase()}.log`) : undefined,
        });
      }),
    );
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  };

  const resumedHeads: Partial<Record<DevnetNetworkName, number>> = {};
  try {
    if (withGateway) {
      // Built on the first request: a resumed devnet need not build the fixture world at start.
      let table: Map<string, Map<string, string>> | null = null;
      const recordsOf = (name: string) => {
        table ??= new Map((world().ensOffchain?.gateway ?? []).map((g) => [g.name, new Map(g.records)]));
        return table.get(name) ?? null;
      };
      gateway = await startEnsGateway({
        port: base + networks.length,
        recordsOf,
        signerKey: DEVNET_GATEWAY_KEY,
        // Answers expire relative to the chain's clock, which a test may have moved forward.
        now: async () => {
          const rpc = devnetRpc(anvils.ETHEREUM!.rpcUrl);
          const latest = await rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
          return Math.max(Number(latest.timestamp), Math.floor(Date.now() / 1000));
        },
        fault: options.gatewayFault ?? gatewayFaultFromEnv(),
      });
    }
    let resumed = false;
    if (previous) {
      try {
        await launch(false);
      } catch (e) {
        // An unreadable state file (say, truncated by a crash): start over rather than fail.
        log(`the saved chain state cannot be loaded (${(e as Error).message}): redeploying`);
        await stopAll();
        clearState();
        previous = null;
      }
    }
    if (previous) {
      const candidate: DevnetManifest = {
        ...previous,
        networks: Object.fromEntries(
          networks.map((n) => [n, { ...previous!.networks[n]!, rpcUrl: anvils[n]!.rpcUrl }]),
        ),
      };
      resumed = await isManifestLive(candidate);
      if (resumed) {
        previous = candidate;
        for (const n of networks) {
          const rpc = devnetRpc(anvils[n]!.rpcUrl);
          resumedHeads[n] = Number(await rpc.call<Hex>("eth_blockNumber"));
          // Started with its saved genesis timestamp, anvil's clock would run on from there: put
          // it back on the wall clock, and never behind the loaded head.
          const latest = await rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
          const now = Math.floor(Date.now() / 1000);
          await rpc.call("anvil_setTime", [Math.max(now, Number(latest.timestamp) + 1)]);
          savers[n] = createStateSaver(rpc, statePath(dataDir, n), resumedHeads[n]);
          await resumeMining(rpc, blockTime);
        }
        log(`resumed the devnet from ${dataDir}`);
      } else {
        log("the saved chain state does not hold the deployed contracts: redeploying");
        await stopAll();
        clearState();
      }
    }

    let seedReport: SeedReport | null = null;
    let bulkReport: BulkSeedReport | null = null;
    let manifest: DevnetManifest;
    if (resumed && previous) {
      manifest = previous;
    } else {
      await launch(true);
      const entries: Partial<Record<DevnetNetworkName, DevnetNetwork>> = {};
      const chains: DevnetChain[] = [];
      await Promise.all(
        networks.map(async (network) => {
          const rpc = devnetRpc(anvils[network]!.rpcUrl);
          await pauseMining(rpc);
          const sender = await createTxSender(rpc, DEVNET_DEPLOYER);
          const genesis = await rpc.call<{ hash: string; timestamp: Hex }>("eth_getBlockByNumber", [
            "0x0",
            false,
          ]);
          const contracts = await deployNetwork(sender, network, {
            timestamp: seed ? Number(genesis.timestamp) + 3_600 : undefined,
            ensGatewayUrl: gateway?.url,
          });
          entries[network] = {
            chainId: NETWORKS[network].chainId,
            rpcUrl: rpc.url,
            contracts,
            genesisHash: genesis.hash.toLowerCase(),
            genesisTimestamp: Number(genesis.timestamp),
          };
          chains.push({ network, sender, contracts });
        }),
      );
      log(`deployed the registries on ${networks.join(", ")}`);
      if (seed) {
        seedReport = await seedWorld(chains, world());
        log(
          `seeded ${seedReport.domains} domains: ${seedReport.transactions} transactions, ${seedReport.logs} events`,
        );
      }
      if (options.bulk && options.bulk > 0) {
        bulkReport = await bulkSeed(chains, { names: options.bulk });
        log(`bulk: ${bulkReport.names} names, ${bulkReport.events} events in ${bulkReport.durationMs} ms`);
      }
      await Promise.all(chains.map((c) => resumeMining(c.sender.rpc, blockTime)));
      if (persist) {
        for (const n of networks)
          savers[n] = createStateSaver(devnetRpc(anvils[n]!.rpcUrl), statePath(dataDir, n), -1);
        await saveAll();
      }
      await options.onFresh?.();
      manifest = {
        version: 1,
        deployer: DEVNET_DEPLOYER,
        createdAt: new Date().toISOString(),
        build,
        seed: { fixtures: seedReport?.domains ?? 0, bulk: bulkReport?.names ?? 0 },
        networks: Object.fromEntries(networks.map((n) => [n, entries[n]!])),
      };
      const offchainResolver = entries.ETHEREUM?.contracts.NAMESPACE_C?.addresses.offchainResolver;
      if (gateway && offchainResolver) {
        manifest.ensOffchain = {
          network: "ETHEREUM",
          resolver: offchainResolver,
          gatewayUrl: gateway.url,
          signer: DEVNET_GATEWAY_SIGNER,
          signerKey: DEVNET_GATEWAY_KEY,
        };
      }
    }
    if (resumed && gateway && manifest.ensOffchain && manifest.ensOffchain.gatewayUrl !== gateway.url) {
      // The gateway got another port than last time: tell the resolver where it is now.
      await sendAndWait(manifest.networks.ETHEREUM!.rpcUrl, {
        to: manifest.ensOffchain.resolver as Hex,
        data: callData("OffchainResolver", "setUrl", [gateway.url]),
      });
      manifest = { ...manifest, ensOffchain: { ...manifest.ensOffchain, gatewayUrl: gateway.url } };
      log(`the ENS gateway moved to ${gateway.url}`);
    }
    const manifestPath = writeDevnetManifest(dataDir, manifest);
    if (persist) saving = startSaving(Object.values(savers) as StateSaver[], SAVE_INTERVAL_MS, log);
    return {
      manifest,
      manifestPath,
      anvils,
      resumed,
      seedReport,
      bulkReport,
      resumedHeads,
      ensGateway: gateway,
      savedHead: (network) => savers[network as DevnetNetworkName]?.savedHead() ?? null,
      saveThrough: async (network, block) =>
        (await savers[network as DevnetNetworkName]?.saveThrough(block)) ?? null,
      chains: () => chainsOf(manifest),
      simulate: async (o) => startSimulation(await chainsOf(manifest), o),
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
