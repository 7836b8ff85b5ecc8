import { existsSync, mkdirSync } from "node:fs";
import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import { NETWORKS } from "../domain/networks.js";
import { type AnvilInstance, findFreePortRange } from "./anvil.js";
import { artifactsFingerprint, ensureArtifacts } from "./artifacts.js";
import { type BulkSeedReport, bulkSeed } from "./bulk-seed.js";
import {
  anvilStatePath,
  chainsOf,
  clearDevnetState,
  DEVNET_DEPLOYER,
  gatewayFaultFromEnv,
  isManifestLive,
  launchAnvils,
  onFreePorts,
  portOf,
  resumeChains,
  sendAndWait,
  uniqueGenesis,
} from "./chain-start.js";
import { DEVNET_GATEWAY_KEY, DEVNET_GATEWAY_SIGNER } from "./ens-gateway-answer.js";
import { type EnsGateway, type GatewayFault, startEnsGateway } from "./ens-gateway.js";
import { DEVNET_NETWORKS, type DevnetNetworkName, callData, deployNetwork } from "./deploy.js";
import { fixtureWorld } from "./fixtures.js";
import {
  type DevnetManifest,
  type DevnetNetwork,
  devnetManifestPath,
  findDevnetManifest,
  solanaOfManifest,
  writeDevnetManifest,
} from "./manifest.js";
import { devnetRpc } from "./rpc.js";
import { type DevnetChain, type SeedReport, seedWorld, worldGenesisTimestamp } from "./seed.js";
import type { SeedWorld } from "./seed-plan.js";
import { type SimulateOptions, type Simulation, startSimulation } from "./simulate.js";
import { type DevnetSolana, loadSolanaState, solanaStatePath, startDevnetSolana } from "./solana-devnet.js";
import type { LedgerState } from "./solana-ledger.js";
import { createStateSaver, EMPTY_BLOCKS_SAVE_MS, type StateSaver, startSaving } from "./state-saver.js";
import { createTxSender, pauseMining, resumeMining } from "./tx-sender.js";

export { chainsOf, DEVNET_DEPLOYER, findRunningDevnet, isManifestLive } from "./chain-start.js";

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
  /**
   * Run the devnet's Solana (solana-devnet.ts) with the `.sol` world, listed as
   * `networks.SOLANA`. Default: true when `networks` is not given (the whole devnet).
   */
  solana?: boolean;
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
  /** The devnet's Solana (its ledger, writer and endpoint), null when not run. */
  readonly solana: DevnetSolana | null;
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

/** Milliseconds between state saves (longer when a save takes long: see state-saver.ts). */
const SAVE_INTERVAL_MS = 1_000;

/**
 * Starts one anvil per network, deploys the registries, seeds the fixture world (and optional
 * benchmark names), starts the devnet's Solana (solana-devnet.ts) with the `.sol` world, and writes
 * DATA_DIR/devnet.json. With `persist` (the default) each chain's state lives in
 * DATA_DIR/anvil-<network>.json.gz (state-saver.ts) and Solana's in DATA_DIR/solana.json.gz: a
 * second start on the same DATA_DIR resumes them (same addresses, same history, no reseeding); when
 * the manifest exists but its state is gone, everything is redeployed and reseeded.
 */
export async function startDevnet(options: StartDevnetOptions): Promise<Devnet> {
  const log = options.log ?? (() => {});
  const persist = options.persist ?? true;
  const blockTime = options.blockTime ?? 1;
  const seed = options.seed ?? true;
  const world = () => options.world ?? fixtureWorld();
  const networks = options.networks ?? DEVNET_NETWORKS;
  const withSolana = options.solana ?? options.networks === undefined;
  // The ENS offchain resolver lives on ETHEREUM: its gateway runs with that chain.
  const withGateway = networks.includes("ETHEREUM");
  const { dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  await ensureArtifacts();

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
  const hasState =
    persist &&
    networks.every((n) => existsSync(anvilStatePath(dataDir, n))) &&
    (!withSolana || existsSync(solanaStatePath(dataDir)));
  // Saved chains hold the contracts of the build that deployed them: another build (a contract
  // changed since) is redeployed, or the chains would go on running the old bytecode.
  const build = artifactsFingerprint();
  const sameBuild = previous?.build === build;
  if (previous && hasState && !sameBuild)
    log("the devnet's contracts changed since it was deployed: redeploying");
  const missing = (m: DevnetManifest) =>
    networks.some((n) => !m.networks[n]) || (withSolana && !m.networks.SOLANA);
  if (!previous || !hasState || !sameBuild || missing(previous)) {
    previous = null;
    clearDevnetState(dataDir);
  }

  // Prefer the ports of the previous run, so that URLs in other configs stay valid. The gateway
  // takes the port after the chains', Solana the one after that.
  let base = options.basePort ?? 8545;
  if (previous) base = portOf(previous.networks[networks[0]]!.rpcUrl);
  base = await findFreePortRange(networks.length + (withGateway ? 1 : 0) + (withSolana ? 1 : 0), base);
  const gatewayPort = base + networks.length;
  const solanaPort = base + networks.length + (withGateway ? 1 : 0);

  const anvils: Partial<Record<DevnetNetworkName, AnvilInstance>> = {};
  let savers: Partial<Record<DevnetNetworkName, StateSaver>> = {};
  let saving: { stop(): Promise<void> } | null = null;
  let gateway: EnsGateway | null = null;
  let solana: DevnetSolana | null = null;
  const stopAll = async () => {
    // The last save before the chains go: a stop loses nothing (a failed save is logged inside).
    await saving?.stop();
    saving = null;
    await gateway?.stop();
    gateway = null;
    await solana?.stop();
    solana = null;
    await Promise.all(Object.values(anvils).map((a) => a?.stop(10_000)));
  };
  const saveAll = () => Promise.all(Object.values(savers).map((s) => s?.save()));
  // Each bind retries past a port another process took since the probe above (onFreePorts).
  const launch = (genesisOf: (n: DevnetNetworkName) => number | undefined) =>
    onFreePorts(base, networks.length, async (port) => {
      await launchAnvils(
        { dataDir, networks, base: port, blockTime, persist, logs: options.logs ?? persist, genesisOf },
        anvils,
      );
      base = port;
    });
  const startSolana = async (state: LedgerState | null) => {
    if (withSolana)
      solana = await onFreePorts(solanaPort, 1, (port) =>
        startDevnetSolana({ dataDir, port, persist, state, seed }),
      );
  };

  let resumedHeads: Partial<Record<DevnetNetworkName, number>> = {};
  try {
    if (withGateway) {
      // Built on the first request: a resumed devnet need not build the fixture world at start.
      let table: Map<string, Map<string, string>> | null = null;
      const recordsOf = (name: string) => {
        table ??= new Map((world().ensOffchain?.gateway ?? []).map((g) => [g.name, new Map(g.records)]));
        return table.get(name) ?? null;
      };
      gateway = await onFreePorts(gatewayPort, 1, (port) =>
        startEnsGateway({
          port,
          recordsOf,
          signerKey: DEVNET_GATEWAY_KEY,
          // Answers expire relative to the chain's clock, which a test may have moved forward.
          now: async () => {
            const rpc = devnetRpc(anvils.ETHEREUM!.rpcUrl);
            const latest = await rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
            return Math.max(Number(latest.timestamp), Math.floor(Date.now() / 1000));
          },
          fault: options.gatewayFault ?? gatewayFaultFromEnv(),
        }),
      );
    }
    let resumed = false;
    if (previous) {
      try {
        // A resumed chain restarts with its saved genesis timestamp (see DevnetNetwork).
        await launch((n) => previous?.networks[n]?.genesisTimestamp);
        if (withSolana) await startSolana(loadSolanaState(solanaStatePath(dataDir)));
      } catch (e) {
        // An unreadable state file (say, truncated by a crash): start over rather than fail.
        log(`the saved chain state cannot be loaded (${(e as Error).message}): redeploying`);
        await stopAll();
        clearDevnetState(dataDir);
        previous = null;
      }
    }
    if (previous) {
      const candidate: DevnetManifest = {
        ...previous,
        networks: Object.fromEntries([
          ...networks.map((n) => [n, { ...previous!.networks[n]!, rpcUrl: anvils[n]!.rpcUrl }]),
          // The recorded genesis hash, not the loaded ledger's: the check below tells them apart.
          ...(solana
            ? [
                [
                  "SOLANA",
                  {
                    ...(solana as DevnetSolana).manifestEntry(),
                    genesisHash: previous.networks.SOLANA?.genesisHash,
                  },
                ],
              ]
            : []),
        ]),
      };
      resumed = await isManifestLive(candidate);
      if (resumed) {
        previous = candidate;
        ({ heads: resumedHeads, savers } = await resumeChains(anvils, networks, dataDir, blockTime));
        log(`resumed the devnet from ${dataDir}`);
      } else {
        log("the saved chain state does not hold the deployed contracts: redeploying");
        await stopAll();
        clearDevnetState(dataDir);
      }
    }

    let seedReport: SeedReport | null = null;
    let bulkReport: BulkSeedReport | null = null;
    let manifest: DevnetManifest;
    if (resumed && previous) {
      manifest = previous;
    } else {
      const genesis = uniqueGenesis(seed ? worldGenesisTimestamp(world()) : Math.floor(Date.now() / 1000));
      await launch(() => genesis);
      await startSolana(null);
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
          savers[n] = createStateSaver(devnetRpc(anvils[n]!.rpcUrl), anvilStatePath(dataDir, n), -1, {
            emptyBlocksSaveMs: EMPTY_BLOCKS_SAVE_MS,
          });
        await saveAll();
      }
      await options.onFresh?.();
      const sol = solana as DevnetSolana | null;
      manifest = {
        version: 1,
        deployer: DEVNET_DEPLOYER,
        createdAt: new Date().toISOString(),
        build,
        seed: { fixtures: seedReport?.domains ?? 0, bulk: bulkReport?.names ?? 0 },
        networks: Object.fromEntries([
          ...networks.map((n) => [n, entries[n]!]),
          ...(sol ? [["SOLANA", sol.manifestEntry()]] : []),
        ]),
      };
      if (sol) log(`started Solana on ${sol.rpc.url}: ${sol.ledger.accounts().length} SNS accounts`);
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
      solana,
      savedHead: (network) => savers[network as DevnetNetworkName]?.savedHead() ?? null,
      saveThrough: async (network, block) =>
        (await savers[network as DevnetNetworkName]?.saveThrough(block)) ?? null,
      chains: () => chainsOf(manifest),
      simulate: async (o) =>
        startSimulation(await chainsOf(manifest), { ...o, solana: solanaOfManifest(manifest) ?? undefined }),
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
