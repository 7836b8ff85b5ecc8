import { createRequire } from "node:module";
import { Resolution } from "@unstoppabledomains/resolution";
import { type Hex, keccak256, stringToHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_DEPLOYER } from "../../src/devnet/devnet.js";
import { realCallData } from "../../src/devnet/real-ens.js";
import { loadRealArtifact } from "../../src/devnet/real-artifacts.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { namehash } from "../../src/devnet/token-ids.js";
import { createTxSender, pauseMining } from "../../src/devnet/tx-sender.js";
import { mapEnsRecord } from "../../src/providers/ens/ens-records.js";
import { type ApiRecord, type EnsJudgeWorld, resolvePath, startEnsJudgeWorld } from "./ens-judge-harness.js";

// setAddr for several coin types on the real PublicResolver (AddressChanged with the coin's own
// byte form), judged by eth_call and by @unstoppabledomains/resolution's own address encoders.
// See ens-resolution.test.ts for how the library is pointed at the devnet.

const NAME = "alice.eth";
const hash20 = (seed: string) => keccak256(stringToHex(seed)).slice(2, 42);
/** coin type → [library ticker or null (ENSIP-11 EVM chains are not in its SLIP-44 table), address bytes] */
const COINS: Array<[number, string | null, Hex]> = [
  [2, "LTC", `0x76a914${hash20("ltc")}88ac`],
  [3, "DOGE", `0x76a914${hash20("doge")}88ac`],
  [145, "BCH", `0x76a914${hash20("bch")}88ac`],
  [2147483785, null, `0x${hash20("polygon")}`],
  [2147492101, null, `0x${hash20("base")}`],
];

describe("ENS judge: addresses for several coin types", () => {
  let w: EnsJudgeWorld;
  let resolution: Resolution;

  beforeAll(async () => {
    w = await startEnsJudgeWorld();
    const rpc = devnetRpc(w.rpcUrl);
    const sender = await createTxSender(rpc, DEVNET_DEPLOYER);
    await pauseMining(rpc);
    await rpc.call("anvil_autoImpersonateAccount", [true]);
    const owner = w.names.find((n) => n.d.name === NAME)!.d.owner as Hex;
    const node = namehash(NAME);
    const calls = COINS.map(([coin, , bytes]) =>
      realCallData("PublicResolver", "setAddr", [node, BigInt(coin), bytes]),
    );
    await sender.send([
      {
        from: owner,
        to: w.ens.resolver,
        data: realCallData("PublicResolver", "multicall", [calls]),
        gas: 2_000_000n,
      },
    ]);
    await sender.mine();
    await w.crawl();
    const mainnet = (
      createRequire(import.meta.url)("@unstoppabledomains/resolution/build/config/ens-config.json") as {
        networks: Record<string, { contracts: Record<string, { address: string }> }>;
      }
    ).networks["1"].contracts;
    const byRole = new Map<string, string>([
      [mainnet.NameWrapper.address.toLowerCase(), w.ens.nameWrapper],
      [mainnet.BaseRegistrarImplementation.address.toLowerCase(), w.ens.baseRegistrar],
    ]);
    resolution = new Resolution({
      sourceConfig: {
        ens: {
          provider: {
            async request(req: { method: string; params?: unknown }): Promise<unknown> {
              let params = (req.params ?? []) as unknown[];
              if (req.method === "eth_call") {
                const [tx, block] = params as [{ to: string; data: string }, unknown];
                params = [{ ...tx, to: byRole.get(tx.to.toLowerCase()) ?? tx.to }, block];
              }
              return rpc.call(req.method, params);
            },
          },
          network: "mainnet",
          registryAddress: w.ens.registry,
        },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it("serves each coin's address as the resolver holds it and as the library encodes it", async () => {
    const res = await w.get(resolvePath(NAME));
    expect(res.status).toBe(200);
    const api = (res.body.data as ApiRecord).records;
    const differences: string[] = [];
    for (const [coin, ticker, bytes] of COINS) {
      const onChain = String(
        await w.client.readContract({
          abi: loadRealArtifact("PublicResolver").abi,
          address: w.ens.resolver,
          functionName: "addr",
          args: [namehash(NAME), BigInt(coin)],
        }),
      ).toLowerCase();
      expect(onChain).toBe(bytes);
      const mapped = mapEnsRecord(`addr.${coin}`, onChain);
      expect(mapped.length).toBe(1);
      const { key, value } = mapped[0];
      if (api[key] !== value) differences.push(`coin ${coin}: API ${key}=${api[key]}, chain ${value}`);
      if (ticker !== null) {
        const lib = await resolution.addr(NAME, ticker);
        if (api[key] !== lib) differences.push(`coin ${coin}: API ${key}=${api[key]}, library ${lib}`);
      }
    }
    expect(differences).toEqual([]);
  });
});
