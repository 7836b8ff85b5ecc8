import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ConnectionLibrary,
  ContractConnection,
  FreenameResolverProvider,
  type IResolvedResource,
  NameTools,
} from "web3-domain-resolver";
import { FNS_ABI } from "web3-domain-resolver/lib/resolver-providers/providers/freename/freename-resolver-provider.consts.js";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { fixtureWorld } from "../../src/devnet/fixtures.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { adapterFor } from "../../src/providers/adapters.js";
import type { Store } from "../../src/store/store.js";
import { createTestApp } from "../api/helpers/test-app.js";
import { crawlToHead } from "../crawler/crawler-harness.js";
import type { Answer, ApiBody, ApiRecord } from "./uns-judge.harness.js";

/**
 * The shared setup of the FNS judge (test/judge/fns-resolution.test.ts): a fresh devnet of the
 * FNS chains (POLYGON, BSC, AURORA) seeded with the fixture world through Freename's function
 * ABI, crawled into a temporary store, omniname's API in process over that store, and Freename's
 * own SDK (`web3-domain-resolver`) pointed at the devnet's registries.
 */

export const FNS_NETWORKS = ["POLYGON", "BSC", "AURORA"] as const;
export type FnsNetwork = (typeof FNS_NETWORKS)[number];

/** The SDK's network names (its `NetworkName`). */
export const SDK_NETWORK: Record<FnsNetwork, string> = { POLYGON: "polygon", BSC: "bsc", AURORA: "aurora" };

/** One FNS domain as omniname's store holds it after the crawl. */
export interface IndexedFnsName {
  network: FnsNetwork;
  name: string;
  /** 0x-prefixed, 64 hex digits. */
  tokenId: string;
  owner: string;
}

export interface FnsJudgeWorld {
  devnet: Devnet;
  store: Store;
  /** Every FNS domain of the store (the crawl's), by network. */
  indexed: IndexedFnsName[];
  /** Every address that owned or owns a fixture FNS name. */
  addresses: string[];
  /** The devnet's FNS registry per network, lower case. */
  registries: Record<FnsNetwork, string>;
  /** GET an API v1 path (with the key); returns status and parsed body. */
  api(path: string): Promise<{ status: number; body: ApiBody }>;
  /** Crawls the chains' new blocks into the store. */
  crawl(): Promise<void>;
  close(): Promise<void>;
}

export async function startFnsJudgeWorld(): Promise<FnsJudgeWorld> {
  const dir = mkdtempSync(join(tmpdir(), "omniname-fns-judge-"));
  const devnet = await startDevnet({
    dataDir: dir,
    persist: false,
    blockTime: 0,
    logs: false,
    networks: [...FNS_NETWORKS],
    basePort: 20_000 + Math.floor(Math.random() * 20_000),
  });
  try {
    const crawl = (store: Store) => crawlToHead(store, sourcesFromManifest(devnet.manifest)).then(() => {});
    // The chains' clock is the wall clock once seeded.
    const t = await createTestApp({ seed: crawl, now: Date.now() });
    const indexed: IndexedFnsName[] = [];
    for await (const page of t.store.domainMap.iterateDomains(500)) {
      for (const d of page) {
        if (d.provider !== "NAMESPACE_A") continue;
        indexed.push({ network: d.network as FnsNetwork, name: d.name, tokenId: d.tokenId, owner: d.owner });
      }
    }
    const addresses = new Set<string>();
    for (const d of fixtureWorld().domains) {
      if (d.provider !== "NAMESPACE_A") continue;
      for (const o of [...(d.history?.previousOwners ?? []), d.owner]) addresses.add(o.toLowerCase());
    }
    const registries = Object.fromEntries(
      FNS_NETWORKS.map((n) => [
        n,
        devnet.manifest.networks[n]!.contracts.NAMESPACE_A!.addresses.registry.toLowerCase(),
      ]),
    ) as Record<FnsNetwork, string>;
    return {
      devnet,
      store: t.store,
      indexed,
      addresses: [...addresses],
      registries,
      async api(path) {
        const res = await t.get(`/svc/api/v1/${path}`);
        return { status: res.statusCode, body: res.json() as ApiBody };
      },
      crawl: () => crawl(t.store),
      async close() {
        await t.close();
        await devnet.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await devnet.stop();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Freename's SDK provider pointed at the devnet, changed only through its own API (no edit inside
 * the package): the SDK hard-codes Freename's mainnet registry address and public RPC URLs, so
 * its contract connections are replaced by ones to the devnet's registries (same `FNS_ABI`, the
 * SDK's `ContractConnection`), every network it knows gets a loopback URL before it builds a
 * provider (ethers 5 asks a new provider's URL for its chain id at once), and `getMetadata`,
 * which GETs the token URI from Freename's web API, answers nothing: the judge runs the SDK's
 * on-chain path only (the devnet's `tokenURI` is "" anyway, ERC-721's default).
 *
 * `resolveOn(name, network)` is the SDK's `resolve` with the network given instead of looked up in
 * Freename's metadata: `NameTools.mapName`, `generateTokenId`, `generateResolvedResource`.
 */
export class DevnetFreenameProvider extends FreenameResolverProvider {
  constructor(rpcUrls: Record<FnsNetwork, string>, registries: Record<FnsNetwork, string>) {
    const byNetwork = new Map(FNS_NETWORKS.map((n) => [SDK_NETWORK[n], n]));
    // Networks of the SDK's that the devnet has not (cronos, polygon-mumbai): a closed loopback
    // port, never the SDK's default public URL.
    const closed = "http://127.0.0.1:9";
    const url = (sdkNetwork: string) => {
      const n = byNetwork.get(sdkNetwork);
      return n ? rpcUrls[n] : closed;
    };
    const library = new ConnectionLibrary(
      ["polygon", "bsc", "aurora", "cronos", "polygon-mumbai", "ethereum"].map((networkName) => ({
        networkName,
        rpcUrl: url(networkName),
      })),
    );
    super({ connectionLibrary: library });
    const devnetConnection = (c: ContractConnection) => {
      const n = byNetwork.get(c.network)!;
      return new ContractConnection({ networkName: c.network, rpcUrl: rpcUrls[n] }, registries[n], FNS_ABI);
    };
    this.readContractConnections = this.readContractConnections
      .filter((c) => byNetwork.has(c.network))
      .map(devnetConnection);
    this.writeContractConnections = this.writeContractConnections
      .filter((c) => byNetwork.has(c.network))
      .map(devnetConnection);
  }

  /** The devnet connections (network → registry address), as the SDK will use them. */
  connections(): Array<{ network: string; address: string }> {
    return this.readContractConnections.map((c) => ({ network: c.network, address: c.address }));
  }

  override async getMetadata(): Promise<undefined> {
    return undefined;
  }

  async resolveOn(name: string, network: FnsNetwork): Promise<IResolvedResource | undefined> {
    const mapped = NameTools.mapName(name);
    if (!mapped) return undefined;
    const tokenId = await this.generateTokenId(mapped);
    if (!tokenId) return undefined;
    return this.generateResolvedResource(mapped, tokenId, SDK_NETWORK[network]);
  }
}

/** Native FNS records mapped as omniname maps them (identity; an empty value maps to nothing). */
export function canonical(natives: Record<string, string> | undefined): Record<string, string> {
  const adapter = adapterFor("NAMESPACE_A")!;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(natives ?? {})) {
    for (const m of adapter.mapRecord(k, v)) out[m.key] = m.value;
  }
  return out;
}

/** What the SDK's resolved resource says (no resource: no owner). */
export function sdkAnswer(r: IResolvedResource | undefined): Answer {
  if (!r) return { owner: null, records: {}, registry: null };
  return {
    owner: r.ownerAddress?.toLowerCase() ?? null,
    records: canonical(r.records),
    registry: r.proxyReaderAddress?.toLowerCase() ?? null,
  };
}

/** The API's answer for a name on one network (404: no owner). */
export async function apiAnswer(w: FnsJudgeWorld, name: string, network: FnsNetwork): Promise<Answer> {
  const r = await w.api(`resolve?domain=${encodeURIComponent(name)}&network=${network}&provider=NAMESPACE_A`);
  if (r.status === 404) return { owner: null, records: {}, registry: null };
  if (r.status !== 200) throw new Error(`${name} on ${network}: API HTTP ${r.status}`);
  const d = r.body.data as ApiRecord;
  return {
    owner: d.ownerAddress.toLowerCase(),
    records: d.records,
    registry: d.info.smartContractAddress?.toLowerCase() ?? null,
  };
}

/**
 * Refuses, and records, every TCP connection this test process opens to anything but the loopback
 * address (the SDK defaults to public RPC URLs and Freename's metadata API): `net.Socket#connect`
 * is where http, https, undici and ethers' requests all open their sockets. Returns the attempts
 * and a function that puts `connect` back.
 */
export function loopbackOnly(): { attempts: string[]; restore(): void } {
  const attempts: string[] = [];
  const original = net.Socket.prototype.connect;
  const loopback = new Set(["127.0.0.1", "localhost", "::1", undefined]);
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // net.connect passes its normalized [options, callback] as one array argument.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const options = (typeof first === "object" && first !== null ? first : { host: args[1] }) as {
      host?: string;
      port?: number;
      path?: string;
    };
    if (options.path === undefined && !loopback.has(options.host)) {
      attempts.push(`${options.host}:${options.port}`);
      throw new Error(`the FNS judge talks to 127.0.0.1 only, not ${options.host}`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return {
    attempts,
    restore: () => {
      net.Socket.prototype.connect = original;
    },
  };
}
