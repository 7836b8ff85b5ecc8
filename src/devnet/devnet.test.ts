import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  type Abi,
  type AbiEvent,
  type Hex,
  createPublicClient,
  decodeAbiParameters,
  http,
  toEventSelector,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomPortBase } from "./anvil.js";
import { CONTRACT_NAMES, abiOf, artifactsFingerprint } from "./artifacts.js";
import { bulkSeed } from "./bulk-seed.js";
import { DEVNET_NETWORKS, type DevnetNetworkName, ENS_ROLES } from "./deploy.js";
import { type Devnet, startDevnet } from "./devnet.js";
import { fixtureWorld, type FixtureWorld } from "./fixtures.js";
import { DEVNET_GATEWAY_KEY, DEVNET_GATEWAY_SIGNER } from "./ens-gateway-answer.js";
import { type DevnetManifest, knownStorageResolvers } from "./manifest.js";
import { devnetRpc } from "./rpc.js";
import { registryTokenId } from "./seed-registry.js";
import { dnsEncode, fnsTokenId, labelhash, namehash, tokenIdHex } from "./token-ids.js";
import { loadRealArtifact, realAbi } from "./real-artifacts.js";
import { pauseMining, resumeMining } from "./tx-sender.js";
import { verifyWorld } from "./verify.js";
import { isAlive } from "../../test/helpers/processes.js";

interface Log {
  address: string;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
}

const TOPIC = {
  SetRecord: "0x0a7ae1cb64eb8d41af8aaee78f12a607071ab429d4cb7c764b43cb10e4b3e373",
  Set: "0x851ffe8e74d5015261dba0a1f9e1b0e5d42c5af5d2ad1908fee897c7d80a0d92",
  NewURI: "0xc5beef08f693b11c316c0c8394a377a0033c9cf701b8cd8afd79cecef60c3952",
  ResetRecords: "0x185c30856dadb58bf097c1f665a52ada7029752dbcad008ea3fefc73bee8c9fe",
  SetReverse: "0xeb76a21470988c474a21f690cc28fee1ed511bd812dc3c21fd0f49c5e5d4708a",
  SetExpiry: "0x93feabb03ab84f47fc85bf0c298103fca21d8c8bc376eae0c1e1c56b9d4f7789",
  WrappedNameRegistered: "0x69e37f151eb98a09618ddaa80c8cfaf1ce5996867c489f45b555b412271ebf27",
  NameWrapped: "0x8ce7013e8abebc55c3890a68f5a27c67c3f7efa64e584de5fb22363c606fd340",
  TransferSingle: "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
  ReverseClaimed: "0x6ada868dd3058cf77a48a74489fd7963688e5464b2b0fa957ace976243270e92",
  // ENSIP-19's NameForAddrChanged is gone: the real contracts have no DefaultReverseRegistrar.
  NameUnwrapped: "0xee2ba1195c65bcf218a83d874335c6bf9d9067b4c672f3c3bf16cf40de7586c4",
  ControllerNameRenewed: "0x3da24c024582931cfaf8267d8ed24d13a82a8068d5bd337d30ec45cea4e506ae",
  BaseNameRegistered: "0xb3d987963d01b2f68493b4bdb130988f157ea43070d4ad840fee0466ed9370d9",
  NameChanged: "0xb7d29e911041e8d9b843369e890bcb72c9388692ba48b65ac54e7214c4c348f7",
  VersionChanged: "0xc6621ccb8f3f5a04bb6502154b2caf6adf5983fe76dfef1cfc9c42e3579db444",
  DNSRecordChanged: "0x52a608b3303a48862d07a73d82fa221318c0027fbbcfb1b2329bface3f19ff2b",
  ContenthashChanged: "0xe379c1624ed7e714cc0937528a32359d69d5281337765313dba4e081b72d7578",
  AddressChanged: "0x65412581168e88a1e60c6459d7f44ae83ad0832e670826c05a4e2476b57af752",
  TextChanged: "0x448bc014f1536726cf8d54ff3d6481ed3cbc683c2591ca204274009afa09b1a1",
  Erc721Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
} as const;

/** The real UNS/CNS contracts the devnet deploys (real-uns.ts). */
const REAL_UNS_CONTRACTS = [
  "UNSRegistry",
  "MintingManager",
  "ProxyReader",
  "ProxyAdmin",
  "TransparentUpgradeableProxy",
  "CNSRegistry",
  "MintingController",
  "Resolver",
];

function chainsOfManifest(m: DevnetManifest) {
  return DEVNET_NETWORKS.map((network) => ({
    network,
    rpcUrl: m.networks[network]!.rpcUrl,
    contracts: m.networks[network]!.contracts,
  }));
}

async function allLogs(m: DevnetManifest, network: DevnetNetworkName): Promise<Log[]> {
  return devnetRpc(m.networks[network]!.rpcUrl).call<Log[]>("eth_getLogs", [
    { fromBlock: "0x0", toBlock: "latest" },
  ]);
}

describe("devnet", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-devnet-"));
  let devnet: Devnet;
  const pids: number[] = [];

  beforeAll(async () => {
    devnet = await startDevnet({ dataDir, blockTime: 0, basePort: randomPortBase(), logs: false });
    for (const a of Object.values(devnet.anvils)) pids.push(a!.pid);
  });
  afterAll(async () => {
    await devnet?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("writes devnet.json: one chain per network with its contracts as SourceContracts, and Solana", () => {
    const m = JSON.parse(readFileSync(join(dataDir, "devnet.json"), "utf8")) as DevnetManifest;
    const shape = Object.fromEntries(
      Object.entries(m.networks).map(([n, net]) => [
        n,
        { chainId: net!.chainId, providers: Object.keys(net!.contracts).sort() },
      ]),
    );
    expect(shape).toEqual({
      ETHEREUM: { chainId: 1, providers: ["NAMESPACE_B", "NAMESPACE_C"] },
      POLYGON: { chainId: 137, providers: ["NAMESPACE_A", "NAMESPACE_B"] },
      BSC: { chainId: 56, providers: ["NAMESPACE_A"] },
      AURORA: { chainId: 1313161554, providers: ["NAMESPACE_A"] },
      SOLANA: { chainId: 0, providers: ["NAMESPACE_D"] },
    });
    expect(Object.keys(m.networks.ETHEREUM!.contracts.NAMESPACE_C!.addresses).sort()).toEqual(
      [...Object.keys(ENS_ROLES), "offchainResolver"].sort(),
    );
    const ports = DEVNET_NETWORKS.map((n) => Number(new URL(m.networks[n]!.rpcUrl).port));
    expect(ports).toEqual([ports[0], ports[0] + 1, ports[0] + 2, ports[0] + 3]);
    // The ENS gateway on the port after the chains', its resolver and signer recorded.
    expect(m.ensOffchain).toEqual({
      network: "ETHEREUM",
      resolver: m.networks.ETHEREUM!.contracts.NAMESPACE_C!.addresses.offchainResolver,
      gatewayUrl: `http://127.0.0.1:${ports[0] + 4}/{sender}/{data}.json`,
      signer: DEVNET_GATEWAY_SIGNER,
      signerKey: DEVNET_GATEWAY_KEY,
    });
    expect(devnet.ensGateway?.url).toBe(m.ensOffchain!.gatewayUrl);
    expect(knownStorageResolvers(m)).toEqual({
      ETHEREUM: [
        m.networks.ETHEREUM!.contracts.NAMESPACE_C!.addresses.resolver,
        m.networks.ETHEREUM!.contracts.NAMESPACE_C!.addresses.oldResolver,
      ],
    });
    // Solana on the port after the gateway's (devnet-solana.test.ts checks the rest of it).
    expect(m.networks.SOLANA!.rpcUrl).toBe(`http://127.0.0.1:${ports[0] + 5}`);
    for (const net of DEVNET_NETWORKS.map((n) => m.networks[n])) {
      expect(net!.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      for (const source of Object.values(net!.contracts)) {
        expect(source!.startBlock).toBeGreaterThan(0);
        for (const a of Object.values(source!.addresses)) expect(a).toMatch(/^0x[0-9a-f]{40}$/);
      }
    }
  });

  it("holds the fixture world exactly, read back through the view functions", async () => {
    expect(devnet.seedReport?.domains).toBe(fixtureWorld().domains.length);
    expect(devnet.seedReport?.clamped).toBe(0);
    expect(await verifyWorld(chainsOfManifest(devnet.manifest), fixtureWorld())).toEqual([]);
  });

  it("reports every difference between a world and the chains", async () => {
    const pick = (name: string, provider: string) =>
      fixtureWorld().domains.findIndex((d) => d.name === name && d.provider === provider);
    const altered: FixtureWorld = structuredClone(fixtureWorld());
    altered.domains[pick("alice.wallet", "NAMESPACE_A")].owner = "0x000000000000000000000000000000000000dead";
    altered.domains[pick("bob.x", "NAMESPACE_B")].records[0][1] = "changed";
    altered.domains[pick("alice.eth", "NAMESPACE_C")].records.push(["text.com.discord", "alice#1"]);
    altered.domains[pick("lapsed.crypto", "NAMESPACE_B")].expiresAt = null;
    const problems = await verifyWorld(chainsOfManifest(devnet.manifest), altered);
    // The new owner of alice.wallet also lacks its reverse record, and the real UNSRegistry answers
    // the zero owner for lapsed.crypto, which the altered world says never expires: six differences.
    expect(problems).toHaveLength(6);
    expect(problems.join("\n")).toMatch(/lapsed\.crypto: owner 0x0+, expected 0x/);
    expect(problems.join("\n")).toMatch(/alice\.wallet: owner .*expected 0x0+dead/);
    expect(problems.join("\n")).toMatch(/alice\.wallet: reverse of 0x0+dead is token 0/);
    expect(problems.join("\n")).toMatch(/bob\.x: record /);
    expect(problems.join("\n")).toMatch(/alice\.eth: record text\.com\.discord/);
    expect(problems.join("\n")).toMatch(/lapsed\.crypto: expiry \d+, expected 0/);
  });

  it("emits only the mainnet event topics, each protocol's record event on its own registries", async () => {
    // Ours (FNS) and the real UNS, CNS and ENS contracts'.
    const abis = [
      ...CONTRACT_NAMES.map((c) => abiOf(c) as Abi),
      ...REAL_UNS_CONTRACTS.map((c) => realAbi(c)),
      ...[...new Set(Object.values(ENS_ROLES))].map((c) => loadRealArtifact(c).abi),
    ];
    const known = new Set(
      abis.flatMap((abi) =>
        abi.filter((i): i is AbiEvent => i.type === "event").map((e) => toEventSelector(e)),
      ),
    );
    const m = devnet.manifest;
    const seen = new Set<string>();
    for (const network of DEVNET_NETWORKS) {
      const logs = await allLogs(m, network);
      const fns = m.networks[network]!.contracts.NAMESPACE_A?.addresses.registry;
      const uns = m.networks[network]!.contracts.NAMESPACE_B?.addresses.registry;
      for (const log of logs) {
        expect(known).toContain(log.topics[0]);
        seen.add(log.topics[0]);
        if (log.topics[0] === TOPIC.SetRecord) expect(log.address).toBe(fns);
        // UNS records: the UNSRegistry's own, or the legacy CNS resolver's.
        if (log.topics[0] === TOPIC.Set)
          expect([uns, m.networks[network]!.contracts.NAMESPACE_B?.addresses.cnsResolver]).toContain(
            log.address,
          );
      }
    }
    for (const [name, topic] of Object.entries(TOPIC)) expect(seen, name).toContain(topic);
  });

  it("mines each registration in a block stamped with the fixture's registration time", async () => {
    const m = devnet.manifest;
    const client = (n: DevnetNetworkName) => createPublicClient({ transport: http(m.networks[n]!.rpcUrl) });
    for (const network of DEVNET_NETWORKS) {
      const logs = await allLogs(m, network);
      const registered = new Map<string, bigint>(); // token id or ENS label → block
      for (const l of logs) {
        if (l.topics[0] === TOPIC.NewURI)
          registered.set(`${l.address}/${l.topics[1]}`, BigInt(l.blockNumber));
        // The controller's event, or the registrar's for labels the wrapper controller registered.
        if (l.topics[0] === TOPIC.WrappedNameRegistered || l.topics[0] === TOPIC.BaseNameRegistered)
          registered.set(`ens/${l.topics[1]}`, BigInt(l.blockNumber));
      }
      const domains = fixtureWorld().domains.filter(
        (d) => d.network === network && d.name.split(".").length === 2,
      );
      for (const d of domains) {
        const source = m.networks[network]!.contracts[d.provider]!;
        const key =
          d.provider === "NAMESPACE_C"
            ? `ens/${labelhash(d.name.split(".")[0])}`
            : `${source.addresses.registry}/${tokenIdHex(registryTokenId(d))}`;
        const block = registered.get(key);
        expect(block, `${d.name} registration on ${network}`).toBeDefined();
        const { timestamp } = await client(network).getBlock({ blockNumber: block! });
        expect(Number(timestamp), d.name).toBe(Math.floor(d.registeredAt / 1000));
      }
    }
  });

  it("computes Freename token ids on chain by the documented formula", async () => {
    const m = devnet.manifest;
    const c = createPublicClient({ transport: http(m.networks.BSC!.rpcUrl) });
    const address = m.networks.BSC!.contracts.NAMESPACE_A!.addresses.registry as Hex;
    const read = (sld: string, tld: string) =>
      c.readContract({ abi: abiOf("FNSRegistry"), address, functionName: "tokenIdOf", args: [sld, tld] });
    expect(await read("cederico", "metaverse")).toBe(
      27852860280769187492768842851433555806350745604062440243777647496936527137670n,
    );
    expect(await read("", "metaverse")).toBe(fnsTokenId("metaverse"));
    expect(await read("xn--caf-dma", "wallet")).toBe(fnsTokenId("xn--caf-dma.wallet"));
  });

  it("announces wrapped subnames with their DNS-encoded name", async () => {
    const logs = await allLogs(devnet.manifest, "ETHEREUM");
    const wrapped = logs.find(
      (l) => l.topics[0] === TOPIC.NameWrapped && l.topics[1] === namehash("pay.alice.eth"),
    );
    expect(wrapped).toBeDefined();
    const [name] = decodeAbiParameters([{ type: "bytes" }], wrapped!.data);
    expect(name).toBe(dnsEncode("pay.alice.eth"));
  });

  it("refuses to bulk-seed while a chain mines each transaction as it comes", async () => {
    const chains = await devnet.chains();
    await expect(bulkSeed(chains, { names: 4, batchSize: 2, runId: "automine" })).rejects.toThrow(
      /mining on \w+ is not paused/,
    );
  });

  it("bulk-seeds benchmark names through the batch functions", async () => {
    const chains = await devnet.chains();
    await Promise.all(chains.map((c) => pauseMining(c.sender.rpc)));
    const report = await bulkSeed(chains, { names: 600, batchSize: 50, runId: "t" });
    await Promise.all(chains.map((c) => resumeMining(c.sender.rpc, 0)));
    expect(report.names).toBe(600);
    // ≥ 4 events a FNS/UNS name (Transfer, NewURI, two records), more for ENS.
    expect(report.events).toBeGreaterThanOrEqual(4 * 600);
    const m = devnet.manifest;
    const c = createPublicClient({ transport: http(m.networks.AURORA!.rpcUrl) });
    const owner = await c.readContract({
      abi: abiOf("FNSRegistry"),
      address: m.networks.AURORA!.contracts.NAMESPACE_A!.addresses.registry as Hex,
      functionName: "ownerOf",
      args: [fnsTokenId("bench-t-f0.bench")],
    });
    expect(owner).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });

  it("simulates registrations and changes at a steady rate without reverts", async () => {
    const sim = await devnet.simulate({ rate: 20, seed: 7 });
    await new Promise((r) => setTimeout(r, 1_500));
    const report = await sim.stop();
    expect(report.ops).toBeGreaterThanOrEqual(20);
    expect(report.ops).toBeLessThanOrEqual(40);
    expect(report.byKind.register).toBeGreaterThan(0);
    expect({ reverted: report.reverted, errors: report.errors, lastError: report.lastError }).toEqual({
      reverted: 0,
      errors: 0,
      lastError: null,
    });
    // Simulated names belong to addresses outside the fixture world, which stays as it was.
    expect(await verifyWorld(chainsOfManifest(devnet.manifest), fixtureWorld())).toEqual([]);
  });

  it("resumes the saved chains on a second start: same contracts, same history", async () => {
    const before = devnet.manifest;
    const counts = await Promise.all(DEVNET_NETWORKS.map(async (n) => (await allLogs(before, n)).length));
    await devnet.stop();
    devnet = await startDevnet({ dataDir, blockTime: 0, basePort: randomPortBase(), logs: false });
    for (const a of Object.values(devnet.anvils)) pids.push(a!.pid);
    expect(devnet.resumed).toBe(true);
    expect(devnet.seedReport).toBeNull();
    for (const n of DEVNET_NETWORKS)
      expect(devnet.manifest.networks[n]!.contracts).toEqual(before.networks[n]!.contracts);
    const after = await Promise.all(
      DEVNET_NETWORKS.map(async (n) => (await allLogs(devnet.manifest, n)).length),
    );
    expect(after).toEqual(counts);
    expect(await verifyWorld(chainsOfManifest(devnet.manifest), fixtureWorld())).toEqual([]);
  });

  it("resumes again after a resumed run: the saved state holds one genesis block, the recorded one", async () => {
    const before = devnet.manifest;
    // The previous test's chains were resumed; mine a block on each so there is history to keep.
    for (const n of DEVNET_NETWORKS) await devnetRpc(before.networks[n]!.rpcUrl).call("evm_mine");
    await devnet.stop();
    for (const n of DEVNET_NETWORKS) {
      const file = join(dataDir, `anvil-${n.toLowerCase()}.json.gz`);
      const state = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as {
        blocks: { header: { number: string; timestamp: string } }[];
      };
      const genesisTimes = state.blocks
        .filter((b) => Number(b.header.number) === 0)
        .map((b) => Number(b.header.timestamp));
      expect(new Set(genesisTimes), n).toEqual(new Set([before.networks[n]!.genesisTimestamp]));
    }
    devnet = await startDevnet({ dataDir, blockTime: 0, basePort: randomPortBase(), logs: false });
    for (const a of Object.values(devnet.anvils)) pids.push(a!.pid);
    expect(devnet.resumed).toBe(true);
    for (const n of DEVNET_NETWORKS) {
      const rpc = devnetRpc(devnet.manifest.networks[n]!.rpcUrl);
      const head = Number(await rpc.call<string>("eth_blockNumber"));
      const block0 = await rpc.call<{ hash: string }>("eth_getBlockByNumber", ["0x0", false]);
      expect(block0.hash.toLowerCase(), n).toBe(before.networks[n]!.genesisHash);
      // New blocks still follow the loaded ones in time.
      const last = await rpc.call<{ timestamp: string }>("eth_getBlockByNumber", [
        `0x${head.toString(16)}`,
        false,
      ]);
      await rpc.call("evm_mine");
      const next = await rpc.call<{ timestamp: string }>("eth_getBlockByNumber", ["latest", false]);
      expect(Number(next.timestamp)).toBeGreaterThanOrEqual(Number(last.timestamp));
    }
    expect(await verifyWorld(chainsOfManifest(devnet.manifest), fixtureWorld())).toEqual([]);
  });

  it("redeploys and reseeds when the saved state is gone", async () => {
    await devnet.stop();
    for (const n of DEVNET_NETWORKS)
      rmSync(join(dataDir, `anvil-${n.toLowerCase()}.json.gz`), { force: true });
    devnet = await startDevnet({ dataDir, blockTime: 0, basePort: randomPortBase(), logs: false });
    for (const a of Object.values(devnet.anvils)) pids.push(a!.pid);
    expect(devnet.resumed).toBe(false);
    expect(await verifyWorld(chainsOfManifest(devnet.manifest), fixtureWorld())).toEqual([]);
  });

  it("redeploys and reseeds when the saved chains hold another build of the contracts", async () => {
    await devnet.stop();
    // As a devnet saved before a contract changed (or by a version that recorded no build).
    const manifestPath = join(dataDir, "devnet.json");
    const saved = JSON.parse(readFileSync(manifestPath, "utf8")) as DevnetManifest;
    expect(saved.build).toBe(artifactsFingerprint());
    writeFileSync(manifestPath, JSON.stringify({ ...saved, build: "an-older-build" }));
    devnet = await startDevnet({ dataDir, blockTime: 0, basePort: randomPortBase(), logs: false });
    for (const a of Object.values(devnet.anvils)) pids.push(a!.pid);
    expect(devnet.resumed).toBe(false);
    expect(devnet.manifest.build).toBe(artifactsFingerprint());
    expect(devnet.manifest.createdAt).not.toBe(saved.createdAt);
    expect(await verifyWorld(chainsOfManifest(devnet.manifest), fixtureWorld())).toEqual([]);
  });

  it("stops every anvil it started", async () => {
    await devnet.stop();
    expect(pids.length).toBe(20); // five starts of four chains
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    for (const n of DEVNET_NETWORKS)
      expect(existsSync(join(dataDir, `anvil-${n.toLowerCase()}.json.gz`))).toBe(true);
  });
});
