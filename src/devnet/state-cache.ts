import { createHash } from "node:crypto";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type AnvilInstance, findFreePortRange, startAnvil } from "./anvil.js";
import type { Hex } from "viem";
import { NETWORKS } from "../domain/networks.js";
import { ensureArtifacts } from "./artifacts.js";
import { type BulkSeedReport, bulkSeed } from "./bulk-seed.js";
import { type DevnetNetworkName, deployNetwork } from "./deploy.js";
import { DEVNET_DEPLOYER } from "./devnet.js";
import type { DevnetManifest } from "./manifest.js";
import { devnetRpc } from "./rpc.js";
import { createTxSender, pauseMining, resumeMining } from "./tx-sender.js";

/**
 * Benchmark worlds built once and kept: a bulk-seeded devnet chain (bulk-seed.ts) is saved with
 * `anvil_dumpState` under `<cacheDir>/<key>/`, and later runs with the same key start anvil with
 * `--load-state` on it instead of seeding again (a 1M-event world: minutes to seed, seconds to
 * load). The key covers what the world is made of: network, names, batch size, run id, the
 * contracts' bytecode (compiled first when a source is newer), the deployment and the seeding code,
 * so a change to any of them builds a new world.
 * Nothing here goes into the repository: the default directory is under the OS's temp dir.
 *
 * @example
 * const world = await startCachedWorld({ network: "POLYGON", names: 250_000 });
 * // world.manifest → sourcesFromManifest; … await world.stop();
 */
export interface CachedWorldOptions {
  network: DevnetNetworkName;
  names: number;
  batchSize?: number;
  runId?: string;
  /** Default: BENCH_CACHE_DIR, else <os tmpdir>/omniname-bench-cache. */
  cacheDir?: string;
  basePort?: number;
  /** Seed even when a saved world exists (and replace it). */
  rebuild?: boolean;
  log?: (message: string) => void;
}

export interface CachedWorld {
  manifest: DevnetManifest;
  rpcUrl: string;
  /** True when loaded from the cache, false when seeded by this call. */
  cached: boolean;
  /** Milliseconds to have the world up: seeding (and saving) it, or loading it. */
  readyMs: number;
  /** The seeding report (saved with the world). */
  seeded: BulkSeedReport;
  /** The state file's size in bytes. */
  stateBytes: number;
  stop(): Promise<void>;
}

export function benchCacheDir(): string {
  return process.env.BENCH_CACHE_DIR || join(tmpdir(), "omniname-bench-cache");
}

const require = createRequire(import.meta.url);

/** What a world depends on besides its options: the contracts' bytecode and the seeding code. */
function codeFingerprint(): string {
  const h = createHash("sha256");
  const add = (path: string) => {
    if (existsSync(path)) h.update(readFileSync(path));
  };
  const build = fileURLToPath(new URL("../../contracts/build/", import.meta.url));
  if (existsSync(build)) for (const f of readdirSync(build).sort()) add(join(build, f));
  for (const name of ["UNSRegistry", "MintingManager"]) {
    try {
      add(require.resolve(`@unstoppabledomains/uns/artifacts/${name}.json`));
    } catch {
      // The real UNS artifacts are a dev dependency: without them no UNS world is seeded at all.
    }
  }
  // The seeding code and the deployment it seeds (deploy.ts: which contracts, how wired).
  for (const file of ["bulk-seed", "deploy"]) {
    add(fileURLToPath(new URL(`./${file}.ts`, import.meta.url)));
    add(fileURLToPath(new URL(`./${file}.js`, import.meta.url)));
  }
  return h.digest("hex");
}

export function worldKey(o: CachedWorldOptions): string {
  const spec = JSON.stringify({
    v: 1,
    network: o.network,
    names: o.names,
    batch: o.batchSize ?? 250,
    runId: o.runId ?? "bench",
    code: codeFingerprint(),
  });
  const id = createHash("sha256").update(spec).digest("hex").slice(0, 16);
  return `${o.network.toLowerCase()}-${o.names}-${id}`;
}

interface SavedWorld {
  manifest: DevnetManifest;
  seeded: BulkSeedReport;
  head: number;
}

/** Loads the world of these options from the cache, or seeds it and saves it there. */
export async function startCachedWorld(o: CachedWorldOptions): Promise<CachedWorld> {
  const log = o.log ?? (() => {});
  const root = o.cacheDir ?? benchCacheDir();
  // Compiled first: the key hashes the build, and a build older than its sources (a contract
  // changed since) would name, and load, the world of the old contracts.
  await ensureArtifacts();
  const dir = join(root, worldKey(o));
  const statePath = join(dir, "anvil-state.json");
  const metaPath = join(dir, "world.json");
  if (!o.rebuild && existsSync(metaPath) && existsSync(statePath)) {
    const saved = JSON.parse(readFileSync(metaPath, "utf8")) as SavedWorld;
    // A port taken between the probe and anvil's bind (another bench starting) is no reason to
    // seed again: a few tries on other ports first.
    let failure: Error | null = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return await loadWorld(saved, statePath, o, (o.basePort ?? 41_000) + 7 * attempt);
      } catch (e) {
        failure = e as Error;
      }
    }
    log(`the cached world in ${dir} cannot be used (${failure?.message}): seeding again`);
  }

  const started = Date.now();
  const work = join(root, `.building-${process.pid}-${Date.now()}`);
  mkdirSync(work, { recursive: true });
  const rawState = join(work, "anvil-dump.json");
  let anvil: AnvilInstance | null = null;
  try {
    const chainId = NETWORKS[o.network].chainId;
    // anvil dumps the chain itself when it stops (`--dump-state`): hundreds of MB to GBs for a
    // large world, more than a JSON-RPC answer can carry.
    anvil = await startAnvil({
      chainId,
      port: await findFreePortRange(1, o.basePort ?? 41_000),
      noMining: true,
      dumpStatePath: rawState,
      genesisTimestamp: Math.floor(Date.now() / 1000) - 86_400,
    });
    const rpc = devnetRpc(anvil.rpcUrl);
    await pauseMining(rpc);
    const sender = await createTxSender(rpc, DEVNET_DEPLOYER);
    const genesis = await rpc.call<{ hash: string; timestamp: Hex }>("eth_getBlockByNumber", ["0x0", false]);
    const contracts = await deployNetwork(sender, o.network, {});
    const seeded = await bulkSeed([{ network: o.network, sender, contracts }], {
      names: o.names,
      batchSize: o.batchSize ?? 250,
      runId: o.runId ?? "bench",
    });
    await resumeMining(rpc, 0);
    const head = Number(await rpc.call<string>("eth_blockNumber"));
    const manifest: DevnetManifest = {
      version: 1,
      deployer: DEVNET_DEPLOYER,
      createdAt: new Date().toISOString(),
      seed: { fixtures: 0, bulk: seeded.names },
      networks: {
        [o.network]: {
          chainId,
          rpcUrl: "",
          contracts,
          genesisHash: genesis.hash.toLowerCase(),
          genesisTimestamp: Number(genesis.timestamp),
        },
      },
    };
    log(
      `seeded ${seeded.names} names, ${seeded.events} events in ${seeded.blocks} blocks (${seeded.durationMs} ms); saving the world to ${dir}`,
    );
    await anvil.stop(30 * 60_000);
    anvil = null;
    // The dump holds every transaction's call trace (~70% of it): nothing the crawler or a bench
    // reads, so the saved world goes without them.
    await stripTraces(rawState, join(work, "anvil-state.json"));
    rmSync(rawState, { force: true });
    writeFileSync(join(work, "world.json"), JSON.stringify({ manifest, seeded, head } satisfies SavedWorld));
    // The world appears whole or not at all: a killed build leaves only its .building directory.
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    const built = Date.now() - started;
    log(`saved the world in ${((built - seeded.durationMs) / 1000).toFixed(1)} s`);
    // The bench reads the world as every later run will: loaded from the cache. A world that fails
    // to load now is not seeded again (an hour for a large one): the error says where it is.
    const saved = JSON.parse(readFileSync(metaPath, "utf8")) as SavedWorld;
    const world = await loadWorld(saved, statePath, o, (o.basePort ?? 41_000) + 7);
    return { ...world, cached: false, readyMs: built + world.readyMs };
  } catch (e) {
    await anvil?.stop();
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
}

/** Starts anvil on a saved world and checks that it is the world saved. */
async function loadWorld(
  saved: SavedWorld,
  statePath: string,
  o: CachedWorldOptions,
  basePort: number,
): Promise<CachedWorld> {
  const started = Date.now();
  const net = saved.manifest.networks[o.network]!;
  // No mining: the world is read, never extended. The saved genesis timestamp makes anvil's own
  // block 0 the saved one (manifest.ts, DevnetNetwork.genesisTimestamp).
  const anvil = await startAnvil({
    chainId: net.chainId,
    port: await findFreePortRange(1, basePort),
    noMining: true,
    statePath,
    genesisTimestamp: net.genesisTimestamp,
    // anvil parses the whole state before it answers: a 1,000,000-event world (~1.6 GB) took
    // 30-60 s on a quiet machine, and a 319 MB one over 20 s at load 15.
    readyTimeoutMs: 60_000 + Math.round(fileSize(statePath) / 2 ** 20) * 200,
  });
  try {
    const rpc = devnetRpc(anvil.rpcUrl);
    const head = Number(await rpc.call<string>("eth_blockNumber"));
    const genesis = await rpc.call<{ hash: string }>("eth_getBlockByNumber", ["0x0", false]);
    if (head !== saved.head || genesis.hash.toLowerCase() !== net.genesisHash)
      throw new Error(
        `it loads with head ${head} and genesis ${genesis.hash}, not ${saved.head} and ${net.genesisHash}`,
      );
  } catch (e) {
    await anvil.stop();
    throw e;
  }
  return {
    manifest: { ...saved.manifest, networks: { [o.network]: { ...net, rpcUrl: anvil.rpcUrl } } },
    rpcUrl: anvil.rpcUrl,
    cached: true,
    readyMs: Date.now() - started,
    seeded: saved.seeded,
    stateBytes: fileSize(statePath),
    stop: () => anvil.stop(),
  };
}

const TRACES = Buffer.from('"traces":[');

/**
 * Copies an anvil state dump with every `"traces":[…]` array emptied, streaming (a dump can be
 * GBs). The arrays' strings are skipped with their escapes, so a bracket in a revert reason does
 * not end an array early.
 */
export async function stripTraces(from: string, to: string): Promise<void> {
  const input = createReadStream(from, { highWaterMark: 1 << 22 });
  const output = createWriteStream(to);
  // Inside a traces array: its bracket depth, and whether in a string (and after a backslash).
  let depth = 0;
  let inString = false;
  let escaped = false;
  // The bytes of a possible "traces":[ split between two chunks.
  let carry = Buffer.alloc(0);
  const write = (b: Buffer) =>
    output.write(b) ? Promise.resolve() : new Promise<void>((r) => output.once("drain", () => r()));
  for await (const chunk of input as AsyncIterable<Buffer>) {
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    carry = Buffer.alloc(0);
    const parts: Buffer[] = [];
    let i = 0;
    while (i < buf.length) {
      if (depth === 0) {
        const at = buf.indexOf(TRACES, i);
        if (at === -1) {
          // Keep a tail that may be the start of the marker.
          const keep = Math.min(TRACES.length - 1, buf.length - i);
          parts.push(buf.subarray(i, buf.length - keep));
          carry = Buffer.from(buf.subarray(buf.length - keep));
          i = buf.length;
          break;
        }
        parts.push(buf.subarray(i, at + TRACES.length));
        i = at + TRACES.length;
        depth = 1;
        continue;
      }
      const c = buf[i++];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x5b) depth++;
      else if (c === 0x5d && --depth === 0) parts.push(Buffer.from("]"));
    }
    for (const p of parts) if (p.length > 0) await write(p);
  }
  if (carry.length > 0) await write(carry);
  await new Promise<void>((resolve, reject) => output.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}
