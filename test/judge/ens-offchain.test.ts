import {
  AbiCoder,
  EnsPlugin,
  FetchRequest,
  type FetchGetUrlFunc,
  Interface,
  JsonRpcProvider,
  Network,
  dnsEncode,
  namehash,
} from "ethers6";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOTABLE, type OffchainEnsWorld, fixtureWorld } from "../../src/devnet/fixtures.js";
import { p2pkhAddress } from "../../src/devnet/fixture-values.js";
import { knownStorageResolvers } from "../../src/devnet/manifest.js";
import { type EnsJudgeWorld, startEnsJudgeWorld } from "./ens-judge-harness.js";

// The judge we did not write: ethers v6 (6.17, installed as the `ethers6` alias: the top-level
// `ethers` stays 5.8, the peer dependency of web3-domain-resolver, Freename's SDK) resolves the
// devnet's offchain ENS names through its registry (EnsPlugin), ENSIP-10 wildcard resolution and
// CCIP-Read (EIP-3668) to the devnet's gateway. ethers may fetch nothing but 127.0.0.1: its
// FetchRequest's transport is replaced by one that refuses every other host.

const offchain: OffchainEnsWorld = fixtureWorld().ensOffchain;
const recordsOf = (name: string) => new Map(offchain.gateway.find((g) => g.name === name)?.records ?? []);

/** An IPFS contenthash (0xe3010170 ‖ multihash) the way ethers prints it: ipfs://<base58 multihash>. */
function ipfsUri(contenthash: string): string {
  const multihash = Buffer.from(contenthash.slice(10), "hex");
  const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  let n = BigInt(`0x${multihash.toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  return `ipfs://${"1".repeat(multihash.findIndex((b) => b !== 0)) + out}`;
}

describe("ENS offchain judge: ethers v6 through the devnet's CCIP-Read gateway", () => {
  let w: EnsJudgeWorld;
  let provider: JsonRpcProvider;
  const refused: string[] = [];
  let restoreGetUrl: FetchGetUrlFunc;

  beforeAll(async () => {
    restoreGetUrl = FetchRequest.createGetUrlFunc();
    const loopbackOnly: FetchGetUrlFunc = async (req, signal) => {
      if (new URL(req.url).hostname !== "127.0.0.1") {
        refused.push(req.url);
        throw new Error(`the judge fetches only 127.0.0.1, not ${req.url}`);
      }
      return restoreGetUrl(req, signal);
    };
    FetchRequest.registerGetUrl(loopbackOnly);
    w = await startEnsJudgeWorld();
    const network = new Network("omniname-devnet", 1);
    network.attachPlugin(new EnsPlugin(w.ens.registry, 1));
    provider = new JsonRpcProvider(w.rpcUrl, network, { staticNetwork: network });
  }, 180_000);

  afterAll(async () => {
    provider?.destroy();
    FetchRequest.registerGetUrl(restoreGetUrl);
    await w?.close();
    expect(refused).toEqual([]);
  });

  it("finds the OffchainResolver, an extended (wildcard) resolver, for every offchain name", async () => {
    const resolverAddress = w.devnet.manifest.ensOffchain!.resolver;
    for (const name of [NOTABLE.ensOffchain, NOTABLE.ensWildcardParent, ...NOTABLE.ensWildcardSubnames]) {
      const resolver = await provider.getResolver(name);
      expect(resolver?.address.toLowerCase(), name).toBe(resolverAddress);
      expect(await resolver!.supportsWildcard()).toBe(true);
    }
  });

  it.each([NOTABLE.ensOffchain, ...NOTABLE.ensWildcardSubnames])(
    "resolves %s's ETH address, text records and contenthash from the gateway",
    async (name) => {
      const before = w.devnet.ensGateway!.requests;
      const records = recordsOf(name);
      const resolver = (await provider.getResolver(name))!;
      expect((await provider.resolveName(name))?.toLowerCase()).toBe(records.get("addr.60"));
      for (const [key, value] of records) {
        if (key.startsWith("text.")) expect(await resolver.getText(key.slice(5)), key).toBe(value);
      }
      const contenthash = records.get("contenthash");
      expect(await resolver.getContentHash()).toBe(contenthash ? ipfsUri(contenthash) : null);
      expect(await resolver.getText("no.such.key")).toBe("");
      expect(w.devnet.ensGateway!.requests).toBeGreaterThan(before);
    },
  );

  it("reads a BTC address (coin type 0) through ethers' CCIP-Read call", async () => {
    // ethers' getAddress(0) needs a MulticoinProviderPlugin (none is built in): the raw
    // resolve(bytes,bytes) call with CCIP-Read enabled is what it would decode.
    const resolver = w.devnet.manifest.ensOffchain!.resolver;
    const iface = new Interface([
      "function resolve(bytes name, bytes data) view returns (bytes)",
      "function addr(bytes32 node, uint256 coinType) view returns (bytes)",
    ]);
    const inner = iface.encodeFunctionData("addr", [namehash(NOTABLE.ensOffchain), 0]);
    const out = await provider.call({
      to: resolver,
      data: iface.encodeFunctionData("resolve", [dnsEncode(NOTABLE.ensOffchain), inner]),
      enableCcipRead: true,
    });
    const [result] = AbiCoder.defaultAbiCoder().decode(["bytes"], out);
    const [script] = AbiCoder.defaultAbiCoder().decode(["bytes"], result);
    const expected = recordsOf(NOTABLE.ensOffchain).get("addr.0")!;
    expect(script).toBe(expected);
    // The P2PKH script of the fixture's hash160.
    expect(p2pkhAddress(expected.slice(8, 48))).toMatch(/^1[1-9A-HJ-NP-Za-km-z]{25,34}$/);
  });

  it("answers a subname that exists nowhere (not even at the gateway) with no records, not an error", async () => {
    const name = NOTABLE.ensWildcardMissing;
    const resolver = await provider.getResolver(name);
    expect(resolver?.address.toLowerCase()).toBe(w.devnet.manifest.ensOffchain!.resolver);
    expect(await provider.resolveName(name)).toBeNull();
    expect(await resolver!.getText("url")).toBe("");
    expect(await resolver!.getContentHash()).toBeNull();
  });

  it("has no resolver for a name outside the wildcard parent", async () => {
    expect(await provider.getResolver("nothing-here-at-all.eth")).toBeNull();
  });

  it("fails on a gateway 500 but reads a bad signature as no record (ethers' choice); the next request works", async () => {
    const gw = w.devnet.ensGateway!;
    const [alice] = NOTABLE.ensWildcardSubnames;
    const resolver = (await provider.getResolver(alice))!;
    try {
      gw.setFault("status500", alice);
      await expect(resolver.getText("url")).rejects.toThrow();
      // The callback reverts (InvalidSignature: src/devnet/ens-gateway.test.ts), and ethers' resolver
      // turns every CALL_EXCEPTION into "no record": a silent empty answer, which omniname must not
      // copy (a callback that reverts is OFFCHAIN_LOOKUP_FAILED: docs/ens-offchain.md).
      gw.setFault("badSignature", alice);
      expect(await resolver.getText("url")).toBeNull();
    } finally {
      gw.setFault("none");
    }
    expect(await resolver.getText("url")).toBe(recordsOf(alice).get("text.url"));
  });

  it("leaves the records of an offchain name out of the map: the crawler indexes the name and its resolver", async () => {
    const resolverAddress = w.devnet.manifest.ensOffchain!.resolver;
    for (const r of offchain.registered) {
      const dom = await w.store.domainMap.findDomainByToken("ETHEREUM", "NAMESPACE_C", namehash(r.name));
      expect(dom, r.name).not.toBeNull();
      expect(dom!.owner).toBe(r.owner);
      expect(dom!.resolver).toBe(resolverAddress);
      expect(await w.store.domainMap.findRecords(dom!.id)).toEqual([]);
    }
    // Gateway-only subnames are not in the map at all.
    for (const name of NOTABLE.ensWildcardSubnames)
      expect(await w.store.domainMap.findDomainByToken("ETHEREUM", "NAMESPACE_C", namehash(name))).toBeNull();
    // The storage resolvers the map answers for do not include the OffchainResolver.
    expect(knownStorageResolvers(w.devnet.manifest).ETHEREUM).not.toContain(resolverAddress);
  });
});
