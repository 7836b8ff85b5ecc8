import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonRpcProvider } from "ethers6";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  parseAbi,
} from "viem";
import { namehash } from "viem/ens";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { ensLiveFor } from "../../src/cli/ens-live.setup.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { Devnet } from "../../src/devnet/devnet.js";
import { NOTABLE } from "../../src/devnet/fixtures.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import type { Store } from "../../src/store/store.js";
import { ethersLoopbackOnly, ethersOnDevnet } from "./ens-live-judge.js";
import { crawlToHead } from "../crawler/crawler-harness.js";
import { startSeededChains } from "../helpers/bare-chain.js";
import { dropRedisKeys } from "../helpers/redis-keys.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

/**
 * ENS names answered live, as the map sees them, on both stores, judged by ethers v6: provenance
 * of a live answer (resolve, deep-resolve, batch); a project that turns live lookups off; a
 * resolver change on chain (`setResolver`) moving a name from offchain to indexed and back, the
 * cached answer dropped at once, in two API processes (two stores on one database; on PostgreSQL
 * they share the answers through Redis, the embedded SQLite setup keeps them per process).
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const CACHE_MS = 60_000;

const REGISTRY_ABI = parseAbi([
  "function owner(bytes32 node) view returns (address)",
  "function setResolver(bytes32 node, address resolver)",
]);
const PUBLIC_RESOLVER_ABI = parseAbi(["function setAddr(bytes32 node, address a)"]);

interface Rec {
  records: Record<string, string>;
  info: { tags: string[] };
  provenance?: {
    owner: unknown;
    records: Record<string, unknown>;
    live?: {
      kind: string;
      resolver: string;
      gateways: string[];
      block: number;
      fetchedAt: string;
      cacheTtlMs: number;
    };
  };
}
interface Answer {
  status: number;
  body: { data?: Rec & Rec[]; error?: { code: string } };
}

/** The stores, and how the API processes share live answers on each: Redis, or the store's table. */
type Variant = (typeof STORE_BACKENDS)[number] & { sharing: "none" | "redis" | "store" };
const VARIANTS: Variant[] = STORE_BACKENDS.flatMap((b): Variant[] =>
  b.name === "sqlite"
    ? [{ ...b, sharing: "none" }]
    : [
        { ...b, name: `${b.name}, shared through Redis`, sharing: "redis" },
        { ...b, name: `${b.name}, shared through the store`, sharing: "store" },
      ],
);

describe.each(VARIANTS)("ENS live names and the map ($name)", (backend) => {
  const shared = backend.sharing !== "none";
  let devnet: Devnet;
  let stores: Store[] = [];
  let cleanupStore: () => Promise<void>;
  let dir: string;
  const apps: FastifyInstance[] = [];
  const prefix = `omniname-test-${randomBytes(6).toString("hex")}`;
  let key = "";
  let offKey = "";
  /** GET on API process 1 and 2 (each its own store and live cache). */
  let get1: (path: string, k?: string) => Promise<Answer>;
  let get2: (path: string, k?: string) => Promise<Answer>;
  /** An API process whose operator turned live lookups off (ENS_LIVE_LOOKUP=false). */
  let getOperatorOff: (path: string, k?: string) => Promise<Answer>;
  let provider: JsonRpcProvider;
  let loopbackOnly: { restore(): void } | undefined;
  let rpcUrl: string;

  beforeAll(async () => {
    loopbackOnly = ethersLoopbackOnly();
    const opened = await backend.open();
    cleanupStore = opened.cleanup;
    stores = [opened.store, await opened.second()];
    dir = mkdtempSync(join(tmpdir(), "omniname-ens-live-"));
    devnet = await startSeededChains(dir, ["ETHEREUM"]);
    rpcUrl = devnet.manifest.networks.ETHEREUM!.rpcUrl;
    await crawlToHead(stores[0]!, sourcesFromManifest(devnet.manifest));
    const logger = pino({ level: process.env.ENS_LIVE_LOG ?? "silent" });
    const config = loadConfig(
      {},
      {
        dataDir: dir,
        ensLiveCacheMs: CACHE_MS,
        ensLiveTimeoutMs: 4_000,
        ...(backend.sharing === "redis" ? { redisUrl: REDIS_URL, redisKeyPrefix: prefix } : {}),
      },
    );
    const pepper = randomBytes(16).toString("hex");
    const project = await stores[0]!.projects.createProject({ name: "ens-live", plan: "internal" });
    key = (await createApiKey(stores[0]!, pepper, project.id, "k")).key;
    const off = await stores[0]!.projects.createProject({ name: "ens-live-off", plan: "internal" });
    await stores[0]!.projects.updateProjectSettings(off.id, { liveLookups: false });
    offKey = (await createApiKey(stores[0]!, pepper, off.id, "k")).key;
    const app = async (store: Store, liveConfig = config) => {
      const ctx: AppContext = {
        config: { ...config, redisUrl: undefined },
        logger,
        store,
        ranker: createScoringRanker(),
        pepper,
        clock: () => Date.now(),
      };
      const a = await buildApp(ctx, {
        services: createConsoleServices(ctx),
        closeServices: true,
        ensLive: ensLiveFor(liveConfig, devnet.manifest, logger, undefined, store),
      });
      apps.push(a);
      return async (path: string, k = key): Promise<Answer> => {
        const res = await a.inject({ url: `/svc/api/v1/${path}`, headers: { "api-key": k } });
        return { status: res.statusCode, body: res.json() };
      };
    };
    get1 = await app(stores[0]!);
    get2 = await app(stores[1]!);
    getOperatorOff = await app(stores[0]!, { ...config, ensLiveLookup: false });

    provider = ethersOnDevnet(devnet.manifest);
  }, 240_000);

  afterAll(async () => {
    provider?.destroy();
    loopbackOnly?.restore();
    for (const a of apps) await a.close();
    await devnet?.stop();
    if (stores[1]) await stores[1].close();
    await cleanupStore?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (backend.sharing === "redis") await dropRedisKeys(REDIS_URL, `${prefix}:*`);
  });

  function ensAddress(role: string): Address {
    return (devnet.manifest.networks.ETHEREUM!.contracts.NAMESPACE_C!.addresses as Record<string, string>)[
      role
    ] as Address;
  }
  const offchainResolver = () => devnet.manifest.ensOffchain!.resolver.toLowerCase();
  const resolve = (name: string, extra = "") => `resolve?domain=${encodeURIComponent(name)}${extra}`;

  /** Sends a transaction as the owner of `name` in the registry (anvil impersonates it). */
  async function asOwnerOf(name: string, to: Address, data: Hex): Promise<void> {
    const client = createPublicClient({ transport: http(rpcUrl) });
    const owner = await client.readContract({
      address: ensAddress("registry"),
      abi: REGISTRY_ABI,
      functionName: "owner",
      args: [namehash(name)],
    });
    await client.request({ method: "anvil_impersonateAccount" as never, params: [owner] as never });
    const wallet = createWalletClient({ transport: http(rpcUrl) });
    const hash = await wallet.sendTransaction({ account: owner, to, data, chain: null });
    const receipt = await client.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
  }

  function setResolver(name: string, resolver: Address): Promise<void> {
    return asOwnerOf(
      name,
      ensAddress("registry"),
      encodeFunctionData({
        abi: REGISTRY_ABI,
        functionName: "setResolver",
        args: [namehash(name), resolver],
      }),
    );
  }

  /** Asks `get` until `ok` holds of its answer (another process sees the map's change a moment later). */
  async function until(get: () => Promise<Answer>, ok: (a: Answer) => boolean): Promise<Answer> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const a = await get();
      if (ok(a) || Date.now() > deadline) return a;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("provenance of a live answer: offchain, the resolver, the gateway, the block and the TTL", async () => {
    const plain = await get1(resolve(NOTABLE.ensOffchain));
    const a = await get1(resolve(NOTABLE.ensOffchain, "&provenance=true"));
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    const d = a.body.data!;
    expect(d.records).toEqual(plain.body.data!.records);
    expect(d.records["token.ETH.0"]).toMatch(/^0x[0-9a-f]{40}$/);
    const head = Number(await createPublicClient({ transport: http(rpcUrl) }).getBlockNumber());
    const live = d.provenance!.live!;
    expect(live).toMatchObject({
      kind: "offchain",
      resolver: offchainResolver(),
      gateways: [devnet.manifest.ensOffchain!.gatewayUrl],
      cacheTtlMs: CACHE_MS,
    });
    expect(live.block).toBeGreaterThan(0);
    expect(live.block).toBeLessThanOrEqual(head);
    expect(Number.isNaN(Date.parse(live.fetchedAt))).toBe(false);
    // A live record has no chain event.
    expect(Object.keys(d.provenance!.records).sort()).toEqual(Object.keys(d.records).sort());
    expect(Object.values(d.provenance!.records).every((v) => v === null)).toBe(true);
    // The owner is the map's, with its event.
    expect(d.provenance!.owner).not.toBeNull();
  });

  it("provenance of a wildcard subname in deep-resolve says wildcard; an indexed name has no live part", async () => {
    const [alice] = NOTABLE.ensWildcardSubnames;
    const a = await get1(`deep-resolve?domain=${alice}&provenance=true`);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.data![0]!.provenance!.live).toMatchObject({
      kind: "wildcard",
      resolver: offchainResolver(),
    });
    const indexed = await get1(resolve("alice.eth", "&provenance=true"));
    expect(indexed.status).toBe(200);
    expect(indexed.body.data!.provenance).toBeDefined();
    expect(indexed.body.data!.provenance!.live).toBeUndefined();
  });

  it("provenance in a batch: the live item says where its records came from, the indexed one does not", async () => {
    const res = await apps[0]!.inject({
      method: "POST",
      url: "/svc/api/v1/batch/resolve?provenance=true",
      headers: { "api-key": key, "content-type": "application/json" },
      payload: { domains: [NOTABLE.ensOffchain, "alice.eth"] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().data as Array<{ input: string; result: boolean; data?: Rec }>;
    expect(items.map((i) => i.result)).toEqual([true, true]);
    expect(items[0]!.data!.provenance!.live?.kind).toBe("offchain");
    expect(items[1]!.data!.provenance!.live).toBeUndefined();
  });

  it("a project that turns live lookups off: the map alone, tagged offchain-not-resolved, the gateway never asked", async () => {
    const before = devnet.ensGateway!.requests;
    const a = await get1(resolve(NOTABLE.ensOffchain), offKey);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.data!.info.tags).toContain("offchain-not-resolved");
    expect(a.body.data!.info.tags).not.toContain("offchain");
    expect(a.body.data!.records["token.ETH.0"]).toBeUndefined();
    const [alice] = NOTABLE.ensWildcardSubnames;
    expect((await get1(resolve(alice!), offKey)).status).toBe(404);
    expect(devnet.ensGateway!.requests).toBe(before);
  });

  it("ENS_LIVE_LOOKUP=false: the map alone for every project, tagged offchain-not-resolved, the gateway never asked", async () => {
    const before = devnet.ensGateway!.requests;
    const a = await getOperatorOff(resolve(NOTABLE.ensOffchain));
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.data!.info.tags).toContain("offchain-not-resolved");
    expect(a.body.data!.records["token.ETH.0"]).toBeUndefined();
    expect((await getOperatorOff(resolve(NOTABLE.ensWildcardSubnames[0]!))).status).toBe(404);
    const indexed = await getOperatorOff(resolve("alice.eth"));
    expect(indexed.status).toBe(200);
    expect(indexed.body.data!.info.tags).not.toContain("offchain-not-resolved");
    expect(devnet.ensGateway!.requests).toBe(before);
  });

  it("setResolver moves a name from offchain to indexed and back: each answer agrees with ethers, the cached answer dropped at once in both processes", async () => {
    const name = NOTABLE.ensOffchain;
    const offchain = await get1(resolve(name));
    expect(offchain.body.data!.info.tags).toContain("offchain");
    const gatewayEth = offchain.body.data!.records["token.ETH.0"];
    expect((await (await provider.getResolver(name))!.getAddress())?.toLowerCase()).toBe(gatewayEth);
    // Warm in both processes: the second asks the gateway only without a shared cache.
    const before = devnet.ensGateway!.requests;
    expect((await get1(resolve(name))).body.data!.records["token.ETH.0"]).toBe(gatewayEth);
    expect(devnet.ensGateway!.requests).toBe(before);
    expect((await get2(resolve(name))).body.data!.records["token.ETH.0"]).toBe(gatewayEth);
    if (shared) expect(devnet.ensGateway!.requests).toBe(before);

    // To the PublicResolver, with an address of its own there: indexed.
    const onChainEth = "0x000000000000000000000000000000000000c0de";
    const publicResolver = ensAddress("resolver");
    const t0 = performance.now();
    await asOwnerOf(
      name,
      publicResolver,
      encodeFunctionData({
        abi: PUBLIC_RESOLVER_ABI,
        functionName: "setAddr",
        args: [namehash(name), onChainEth],
      }),
    );
    await setResolver(name, publicResolver);
    await crawlToHead(stores[0]!, sourcesFromManifest(devnet.manifest));
    expect((await (await provider.getResolver(name))!.getAddress())?.toLowerCase()).toBe(onChainEth);
    const isIndexed = (a: Answer) =>
      a.status === 200 &&
      a.body.data!.records["token.ETH.0"] === onChainEth &&
      !a.body.data!.info.tags.includes("offchain");
    const asked = devnet.ensGateway!.requests;
    expect(isIndexed(await get1(resolve(name)))).toBe(true);
    expect(isIndexed(await until(() => get2(resolve(name)), isIndexed))).toBe(true);
    const toIndexedMs = performance.now() - t0;
    expect(devnet.ensGateway!.requests).toBe(asked);

    // Back to the OffchainResolver: the answer cached before the move is not served (it is of
    // an older stamp of the map): the gateway is asked again.
    const t1 = performance.now();
    await setResolver(name, offchainResolver() as Address);
    await crawlToHead(stores[0]!, sourcesFromManifest(devnet.manifest));
    expect((await (await provider.getResolver(name))!.getAddress())?.toLowerCase()).toBe(gatewayEth);
    const isOffchain = (a: Answer) =>
      a.status === 200 &&
      a.body.data!.records["token.ETH.0"] === gatewayEth &&
      a.body.data!.info.tags.includes("offchain");
    // (ethers above asked the gateway itself: count from here.)
    const beforeBack = devnet.ensGateway!.requests;
    const back = await get1(resolve(name));
    expect(isOffchain(back), JSON.stringify(back.body)).toBe(true);
    const afterBack = devnet.ensGateway!.requests;
    expect(afterBack).toBeGreaterThan(beforeBack);
    expect(isOffchain(await until(() => get2(resolve(name)), isOffchain))).toBe(true);
    // With the shared cache the second process takes the first one's new answer.
    if (shared) expect(devnet.ensGateway!.requests).toBe(afterBack);
    const toOffchainMs = performance.now() - t1;
    console.log(
      `[ens-live-map ${backend.name}] offchain → indexed in ${toIndexedMs.toFixed(0)} ms, indexed → offchain in ${toOffchainMs.toFixed(0)} ms (transactions, crawl and both processes' answers)`,
    );
  }, 60_000);
});
