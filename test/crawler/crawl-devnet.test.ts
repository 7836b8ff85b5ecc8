import { randomBytes } from "node:crypto";
import pino from "pino";
import { type Abi, createPublicClient, type Hex, http, type PublicClient } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { buildApp } from "../../src/api/app.js";
import { statusRoutes } from "../../src/api/routes/status.routes.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { abiOf, CONTRACT_NAMES, type ContractName } from "../../src/devnet/artifacts.js";
import { realAbi } from "../../src/devnet/real-artifacts.js";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { CNS_NAMES, cnsFinal } from "../../src/devnet/seed-uns.js";
import { fixtureWorld, fixtureBaseTime, type FixtureDomain } from "../../src/devnet/fixtures.js";
import { adapterFor } from "../../src/providers/adapters.js";
import { ETH_NODE, labelhash, namehash } from "../../src/providers/namehash.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import type { Store } from "../../src/store/store.js";
import { crawlToHead, tempStore } from "./crawler-harness.js";

// The moment the API is asked at: the fixtures' expired names are expired, the others far from it.
const NOW = fixtureBaseTime() + 365 * 24 * 3_600_000;

function expectedRecords(d: FixtureDomain): Record<string, string> {
  const adapter = adapterFor(d.provider)!;
  const out: Record<string, string> = {};
  for (const [k, v] of d.records) for (const m of adapter.mapRecord(k, v)) out[m.key] = m.value;
  return out;
}

describe("crawling the seeded devnet", () => {
  let devnet: Devnet;
  let store: Store;
  let cleanup: () => Promise<void>;
  let sources: CrawlerSource[];
  let crawl: Awaited<ReturnType<typeof crawlToHead>>;

  beforeAll(async () => {
    const t = await tempStore();
    store = t.store;
    cleanup = t.cleanup;
    devnet = await startDevnet({
      dataDir: t.dir,
      persist: false,
      blockTime: 0,
      logs: false,
      basePort: 20_000 + Math.floor(Math.random() * 20_000),
    });
    sources = sourcesFromManifest(devnet.manifest);
    crawl = await crawlToHead(store, sources);
  });
  afterAll(async () => {
    await devnet?.stop();
    await cleanup?.();
  });

  it("reaches every chain's head with every source", () => {
    expect(sources.map((s) => s.id).sort()).toEqual([
      "ens-ethereum",
      "fns-aurora",
      "fns-bsc",
      "fns-polygon",
      "uns-ethereum",
      "uns-polygon",
    ]);
    for (const s of crawl.status) {
      expect(s.checkpoint).toBe(s.head);
      expect(s.error).toBeNull();
    }
  });

  it("holds every fixture domain with exactly its owner, records, registration, expiry and reverse", async () => {
    const problems: string[] = [];
    for (const d of fixtureWorld().domains) {
      const tag = `${d.provider}/${d.network}/${d.name}`;
      const dom = await store.domainMap.findDomainByToken(
        d.network,
        d.provider,
        adapterFor(d.provider)!.tokenIdOf(d.name),
      );
      if (!dom) {
        problems.push(`${tag}: missing`);
        continue;
      }
      if (dom.name !== d.name) problems.push(`${tag}: name ${dom.name}`);
      if (dom.owner !== d.owner) problems.push(`${tag}: owner ${dom.owner}`);
      const records = Object.fromEntries(
        (await store.domainMap.findRecords(dom.id)).map((r) => [r.key, r.value]),
      );
      expect.soft(records, tag).toEqual(expectedRecords(d));
      if (dom.registeredAt !== d.registeredAt) problems.push(`${tag}: registeredAt ${dom.registeredAt}`);
      const expiry =
        d.expiresAt === null || d.provider === "NAMESPACE_A" ? null : Math.floor(d.expiresAt / 1000) * 1000;
      if (d.provider !== "NAMESPACE_A" && dom.expiresAt !== expiry)
        problems.push(`${tag}: expiresAt ${dom.expiresAt}`);
      const reverse = await store.domainMap.findReverse(d.owner, {
        network: d.network,
        provider: d.provider,
      });
      if (d.reverse && !reverse.some((r) => r.domainId === dom.id))
        problems.push(`${tag}: reverse record missing`);
    }
    expect(problems).toEqual([]);
    // Besides the fixtures, the ENS `eth` node (owned by the registrar), the .eth names of the
    // offchain resolver (records at the gateway, none in the map) and the live legacy CNS names
    // are domains (not the UNS TLD tokens, nor the burned names).
    const cns = CNS_NAMES.filter((c) => cnsFinal(c) !== null).length;
    const offchain = fixtureWorld().ensOffchain.registered.length;
    expect(await store.domainMap.countDomains()).toBe(fixtureWorld().domains.length + 1 + offchain + cns);
  });

  it("indexes the legacy CNS names: registry Transfer/NewURI/Resolve and the resolver's Set/ResetRecords", async () => {
    const adapter = adapterFor("NAMESPACE_B")!;
    const problems: string[] = [];
    for (const c of CNS_NAMES) {
      const dom = await store.domainMap.findDomainByToken(
        "ETHEREUM",
        "NAMESPACE_B",
        adapter.tokenIdOf(c.name),
      );
      const want = cnsFinal(c);
      if (want === null) {
        if (dom) problems.push(`${c.name}: burned but indexed`);
        continue;
      }
      if (!dom) {
        problems.push(`${c.name}: missing`);
        continue;
      }
      if (dom.name !== c.name) problems.push(`${c.name}: name ${dom.name}`);
      if (dom.owner !== want.owner) problems.push(`${c.name}: owner ${dom.owner}, expected ${want.owner}`);
      const cnsRegistry = devnet.manifest.networks.ETHEREUM!.contracts.NAMESPACE_B!.addresses.cnsRegistry;
      if (dom.contractAddress !== cnsRegistry) problems.push(`${c.name}: contract ${dom.contractAddress}`);
      const records = Object.fromEntries(
        (await store.domainMap.findRecords(dom.id)).map((r) => [r.key, r.value]),
      );
      const expected: Record<string, string> = {};
      for (const [k, v] of want.records) for (const m of adapter.mapRecord(k, v)) expected[m.key] = m.value;
      expect.soft(records, c.name).toEqual(expected);
    }
    expect(problems).toEqual([]);
  });

  it("serves through the API what the contracts' view functions read", async () => {
    const ctx: AppContext = {
      config: loadConfig({}, { dataDir: "." }),
      logger: pino({ level: "silent" }),
      store,
      ranker: createScoringRanker(),
      pepper: randomBytes(16).toString("hex"),
      clock: () => NOW,
    };
    const project = await store.projects.createProject({ name: "crawler-check", plan: "internal" });
    const { key } = await createApiKey(store, ctx.pepper, project.id, "k");
    const app = await buildApp(ctx, { services: createConsoleServices(ctx), closeServices: true });
    try {
      const clients = new Map<string, PublicClient>();
      // Ours (artifacts.ts: FNS) or the real UNS, CNS and ENS contracts (real-artifacts.ts).
      const read = (rpcUrl: string, contract: string, address: string, fn: string, args: unknown[]) => {
        let c = clients.get(rpcUrl);
        if (!c) {
          c = createPublicClient({ transport: http(rpcUrl, { batch: { batchSize: 100 } }) }) as PublicClient;
          clients.set(rpcUrl, c);
        }
        return c.readContract({
          abi: ((CONTRACT_NAMES as readonly string[]).includes(contract)
            ? abiOf(contract as ContractName)
            : realAbi(contract)) as Abi,
          address: address as Hex,
          functionName: fn,
          args,
        });
      };
      const live = fixtureWorld().domains.filter((d) => d.expiresAt === null || d.expiresAt > NOW);
      expect(live.length).toBeGreaterThan(150);
      const mismatches: string[] = [];
      await Promise.all(
        live.map(async (d) => {
          const net = devnet.manifest.networks[d.network]!;
          const a = net.contracts[d.provider]!.addresses;
          const adapter = adapterFor(d.provider)!;
          const res = await app.inject({
            url: `/svc/api/v1/resolve?domain=${encodeURIComponent(d.name)}&network=${d.network}&provider=${d.provider}`,
            headers: { "api-key": key },
          });
          if (res.statusCode !== 200) {
            mismatches.push(`${d.name}: HTTP ${res.statusCode}`);
            return;
          }
          const api = res.json().data as { ownerAddress: string; records: Record<string, string> };
          const tokenId = BigInt(adapter.tokenIdOf(d.name));
          const nativeKeys = [
            ...new Set([
              ...d.records.map(([k]) => k),
              ...(d.history?.resetRecordsBefore ?? []).map(([k]) => k),
            ]),
          ];
          let owner: string;
          const chain: Record<string, string> = {};
          if (d.provider === "NAMESPACE_C") {
            const node = namehash(d.name);
            const labels = d.name.split(".");
            const registryOwner = String(
              await read(net.rpcUrl, "ENSRegistry", a.registry, "owner", [node]),
            ).toLowerCase();
            if (registryOwner === a.nameWrapper)
              owner = String(await read(net.rpcUrl, "NameWrapper", a.nameWrapper, "ownerOf", [BigInt(node)]));
            else if (labels.length === 2 && namehash(labels[1]) === ETH_NODE)
              owner = String(
                await read(net.rpcUrl, "BaseRegistrarImplementation", a.baseRegistrar, "ownerOf", [
                  BigInt(labelhash(labels[0])),
                ]),
              );
            else owner = registryOwner;
            const resolver = String(await read(net.rpcUrl, "ENSRegistry", a.registry, "resolver", [node]));
            for (const k of nativeKeys) {
              let v: unknown;
              if (k.startsWith("addr."))
                v = await read(net.rpcUrl, "PublicResolver", resolver, "addr", [node, BigInt(k.slice(5))]);
              else if (k.startsWith("text."))
                v = await read(net.rpcUrl, "PublicResolver", resolver, "text", [node, k.slice(5)]);
              else if (k === "contenthash")
                v = await read(net.rpcUrl, "PublicResolver", resolver, "contenthash", [node]);
              else continue; // DNS wire records: covered by the fixture comparison above
              const value =
                String(v) === "0x" ? "" : k.startsWith("text.") ? String(v) : String(v).toLowerCase();
              if (value !== "") for (const m of adapter.mapRecord(k, value)) chain[m.key] = m.value;
            }
          } else {
            const contract = d.provider === "NAMESPACE_A" ? "FNSRegistry" : "UNSRegistry";
            owner = String(await read(net.rpcUrl, contract, a.registry, "ownerOf", [tokenId]));
            const values = (await read(net.rpcUrl, contract, a.registry, "getMany", [
              nativeKeys,
              tokenId,
            ])) as string[];
            nativeKeys.forEach((k, i) => {
              if (values[i] !== "") for (const m of adapter.mapRecord(k, values[i])) chain[m.key] = m.value;
            });
          }
          if (api.ownerAddress.toLowerCase() !== owner.toLowerCase())
            mismatches.push(`${d.name}: owner API ${api.ownerAddress} chain ${owner}`);
          const apiRecords = Object.fromEntries(
            Object.entries(api.records).filter(
              ([k]) => d.provider !== "NAMESPACE_C" || !k.startsWith("record."),
            ),
          );
          if (
            JSON.stringify(Object.entries(apiRecords).sort()) !== JSON.stringify(Object.entries(chain).sort())
          )
            mismatches.push(
              `${d.name}: records API ${JSON.stringify(apiRecords)} chain ${JSON.stringify(chain)}`,
            );
        }),
      );
      expect(mismatches).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it("reports every source at GET /status and its metrics at GET /metrics", async () => {
    const Fastify = (await import("fastify")).default;
    const app = Fastify();
    await app.register(statusRoutes, {
      store,
      crawler: { status: () => crawl.status },
      registry: crawl.metrics.registry,
    });
    const res = await app.inject({ url: "/status" });
    expect(res.statusCode).toBe(200);
    const sources = res.json().data.sources as Array<{
      id: string;
      head: number;
      checkpoint: number;
      lag: number;
      state: string;
    }>;
    expect(sources).toHaveLength(6);
    for (const s of sources) expect(s).toMatchObject({ lag: 0, checkpoint: s.head });
    const metrics = await app.inject({ url: "/metrics" });
    expect(metrics.body).toMatch(/omniname_crawler_checkpoint_block\{source="uns-polygon"\} \d+/);
    expect(metrics.body).toMatch(/omniname_crawler_events_total\{source="ens-ethereum"\} [1-9]/);
    await app.close();
  });
});
