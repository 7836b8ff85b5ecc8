import net from "node:net";
import { NameTools, Resolver } from "web3-domain-resolver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureWorld } from "../../src/devnet/fixtures.js";
import { normalizeName } from "../../src/domain/names.js";
import {
  apiAnswer,
  DevnetFreenameProvider,
  FNS_NETWORKS,
  type FnsJudgeWorld,
  type FnsNetwork,
  loopbackOnly,
  SDK_NETWORK,
  sdkAnswer,
  startFnsJudgeWorld,
} from "./fns-judge.harness.js";
import { differences } from "./uns-judge.harness.js";

/**
 * A judge we did not write: every FNS name the devnet seeded, on POLYGON, BSC and AURORA, resolved
 * by Freename's own SDK, `web3-domain-resolver` 1.0.7 (its `FreenameResolverProvider` over its own
 * `FNS_ABI`, pointed at the devnet's registries: fns-judge.harness.ts), and by omniname's API over
 * the crawled index. Owner, records (the SDK reads every key with `getAllKeys` and their values
 * with `getManyRecords`; omniname's key mapping applied), registry, token id and reverse records
 * must agree; the failure lists every difference. Then the SDK writes (setRecord, setRecords,
 * setReverse, transfer, signed by the owner) and omniname, once it has crawled them, still agrees.
 * Only the SDK's on-chain path runs: no Freename web API, and no socket to anything but 127.0.0.1.
 */

const tokenHex = (decimal: string) => `0x${BigInt(decimal).toString(16).padStart(64, "0")}`;

describe("FNS names: Freename's web3-domain-resolver against omniname's API", () => {
  let w: FnsJudgeWorld;
  let sdk: DevnetFreenameProvider;
  const guard = loopbackOnly();

  beforeAll(async () => {
    w = await startFnsJudgeWorld();
    const rpcUrls = Object.fromEntries(
      FNS_NETWORKS.map((n) => [n, w.devnet.manifest.networks[n]!.rpcUrl]),
    ) as Record<FnsNetwork, string>;
    sdk = new DevnetFreenameProvider(rpcUrls, w.registries);
  }, 240_000);
  afterAll(async () => {
    guard.restore();
    await w?.close();
  });

  const fixtureNames = (network: FnsNetwork) =>
    fixtureWorld()
      .domains.filter((d) => d.provider === "NAMESPACE_A" && d.network === network)
      .map((d) => d.name)
      .sort();

  it("reads the devnet's registries only: one connection per FNS network, to its devnet registry", () => {
    expect(sdk.connections()).toEqual(
      FNS_NETWORKS.map((n) => ({ network: SDK_NETWORK[n], address: w.registries[n] })),
    );
  });

  it("indexes exactly the fixture world's FNS names on each network", () => {
    for (const n of FNS_NETWORKS) {
      const indexed = w.indexed.filter((d) => d.network === n).map((d) => d.name);
      expect(indexed.sort(), n).toEqual(fixtureNames(n));
    }
  });

  it("derives every FNS name's token id as omniname does (NameTools.mapName + generateTokenId)", async () => {
    const diffs: string[] = [];
    for (const d of w.indexed) {
      const mapped = NameTools.mapName(d.name);
      const id = mapped ? await sdk.generateTokenId(mapped) : undefined;
      if (!id || tokenHex(id) !== d.tokenId)
        diffs.push(`${d.network} ${d.name}: SDK ${id}, omniname ${d.tokenId}`);
    }
    expect(diffs).toEqual([]);
  });

  it.each(FNS_NETWORKS)(
    "agrees on the owner and records of every FNS name on %s",
    async (network) => {
      const names = w.indexed.filter((d) => d.network === network);
      expect(names.length).toBe(fixtureNames(network).length);
      const diffs: string[] = [];
      let withRecords = 0;
      for (const d of names) {
        const sdkSide = sdkAnswer(await sdk.resolveOn(d.name, network));
        const apiSide = await apiAnswer(w, d.name, network);
        if (sdkSide.owner === null) diffs.push(`${network} ${d.name}: the SDK finds no token`);
        if (Object.keys(sdkSide.records).length > 0) withRecords++;
        diffs.push(...differences(`${network} ${d.name}`, sdkSide, apiSide, "SDK"));
      }
      expect(diffs).toEqual([]);
      // Not a vacuous agreement: the names carry records.
      expect(withRecords).toBeGreaterThan(names.length / 2);
    },
    120_000,
  );

  it("agrees through the SDK's own resolve(name) (network found on chain) for names on one network", async () => {
    const resolver = new Resolver([sdk]);
    const networksOf = new Map<string, FnsNetwork[]>();
    for (const d of w.indexed) networksOf.set(d.name, [...(networksOf.get(d.name) ?? []), d.network]);
    const diffs: string[] = [];
    let judged = 0;
    for (const [name, networks] of networksOf) {
      if (networks.length !== 1) continue;
      const r = await resolver.resolve(name);
      if (r?.network !== SDK_NETWORK[networks[0]]) diffs.push(`${name}: SDK network ${r?.network}`);
      diffs.push(...differences(name, sdkAnswer(r), await apiAnswer(w, name, networks[0]), "SDK"));
      judged++;
    }
    expect(diffs).toEqual([]);
    expect(judged).toBeGreaterThan(100);
  }, 120_000);

  it("agrees on the reverse record of every FNS owner, present or past, on each network", async () => {
    const tokenOf = new Map(w.indexed.map((d) => [`${d.network}/${d.name}`, d.tokenId]));
    const diffs: string[] = [];
    let reverses = 0;
    for (const network of FNS_NETWORKS) {
      const stored = new Map(
        (await w.store.domainMap.listReverseRecords())
          .filter((r) => r.provider === "NAMESPACE_A" && r.network === network)
          .map((r) => [r.address.toLowerCase(), r.domainId]),
      );
      for (const address of w.addresses) {
        const id = await sdk.reverseResolve(address, SDK_NETWORK[network]);
        const tag = `${network} ${address}`;
        if (!id) {
          if (stored.has(address)) diffs.push(`${tag}: SDK no reverse record, omniname has one`);
          continue;
        }
        reverses++;
        const r = await w.api(
          `reverse-resolve?walletAddress=${address}&network=${network}&provider=NAMESPACE_A`,
        );
        const first = Array.isArray(r.body.data) ? r.body.data[0] : undefined;
        const apiToken = first ? tokenOf.get(`${network}/${normalizedName(first.domain)}`) : undefined;
        if (apiToken !== tokenHex(id))
          diffs.push(`${tag}: SDK reverse token ${tokenHex(id)}, API first ${first?.domain}`);
      }
    }
    expect(diffs).toEqual([]);
    const fixtureReverses = fixtureWorld().domains.filter((d) => d.provider === "NAMESPACE_A" && d.reverse);
    expect(reverses).toBe(fixtureReverses.length);
  }, 120_000);

  it("sees the SDK's own writes (setRecord, setRecords, setReverse, transfer) as omniname does once crawled", async () => {
    const network: FnsNetwork = "AURORA";
    const name = "iris-701.wallet";
    // An anvil dev account (#2, unlocked) that holds another reverse record on AURORA (carol.web3).
    const owner = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
    const buyer = "0x14dc79964da2c08b23698b3d3cc7ca32193d9955";
    const resource = await sdk.resolveOn(name, network);
    expect(resource?.ownerAddress?.toLowerCase()).toBe(owner);
    const connection = sdk.writeContractConnections.find((c) => c.network === SDK_NETWORK[network])!;
    // The SDK's own ethers 5 provider (a JsonRpcProvider, typed as its Provider base): the owner's
    // transactions go through anvil's unlocked dev account.
    type Signer = Parameters<DevnetFreenameProvider["setRecord"]>[3];
    const rpc = connection.provider as unknown as { getSigner(address: string): Signer };
    const signer = rpc.getSigner(owner);
    expect(await sdk.setRecord(resource!, "social.TWITTER.0", "iris_fns", signer)).toBe(true);
    expect(
      await sdk.setRecords(
        resource!,
        ["redirect.WEBSITE.0", "token.ETH.0"],
        ["https://iris.example.net", ""],
        signer,
      ),
    ).toBe(true);
    expect(await sdk.setReverse(resource!, signer)).toBe(true);
    await w.crawl();
    const judge = async () => {
      const sdkSide = sdkAnswer(await sdk.resolveOn(name, network));
      expect(differences(name, sdkSide, await apiAnswer(w, name, network), "SDK")).toEqual([]);
      return sdkSide;
    };
    const written = await judge();
    expect(written.records["social.TWITTER.0"]).toBe("iris_fns");
    expect(written.records["redirect.WEBSITE.0"]).toBe("https://iris.example.net");
    expect(written.records["token.ETH.0"]).toBeUndefined();
    const reverseOf = async (address: string) => {
      const id = await sdk.reverseResolve(address, SDK_NETWORK[network]);
      const r = await w.api(
        `reverse-resolve?walletAddress=${address}&network=${network}&provider=NAMESPACE_A`,
      );
      const names = (r.body.data as Array<{ domain: string }>).map((d) => d.domain);
      return { sdk: id ? tokenHex(id) : null, apiFirst: names[0] ?? null };
    };
    const token = w.indexed.find((d) => d.network === network && d.name === name)!.tokenId;
    expect(await reverseOf(owner)).toEqual({ sdk: token, apiFirst: name });

    // A transfer drops the seller's reverse record (RemoveReverse), on chain and in the index.
    expect(await sdk.transfer(resource!, buyer, signer)).toBe(true);
    await w.crawl();
    expect((await judge()).owner).toBe(buyer);
    expect((await reverseOf(owner)).sdk).toBeNull();
    const stored = await w.store.domainMap.listReverseRecords();
    expect(stored.filter((r) => r.network === network && r.address.toLowerCase() === owner)).toEqual([]);
  }, 120_000);

  it("sent nothing anywhere but 127.0.0.1 (and the guard does refuse another address)", () => {
    expect(guard.attempts).toEqual([]);
    // 192.0.2.1: TEST-NET-1, never routed; refused before any packet leaves.
    expect(() => net.connect({ host: "192.0.2.1", port: 443 })).toThrow(/127\.0\.0\.1 only/);
    expect(guard.attempts).toEqual(["192.0.2.1:443"]);
  });
});

function normalizedName(name: string): string {
  const n = normalizeName(name);
  return n.ok ? n.value.name : name;
}
