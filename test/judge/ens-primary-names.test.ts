import { createRequire } from "node:module";
import { Resolution } from "@unstoppabledomains/resolution";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_DEPLOYER } from "../../src/devnet/devnet.js";
import { realCallData } from "../../src/devnet/real-ens.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { loadRealArtifact } from "../../src/devnet/real-artifacts.js";
import { labelhash, namehash } from "../../src/devnet/token-ids.js";
import { createTxSender, pauseMining, type TxSender } from "../../src/devnet/tx-sender.js";
import {
  type ApiRecord,
  type EnsJudgeWorld,
  resolvePath,
  reversePath,
  startEnsJudgeWorld,
} from "./ens-judge-harness.js";

// Forward verification of ENS primary names, judged by @unstoppabledomains/resolution's
// `reverseOf` (which checks that the name's ETH address is the address, as ENS clients do): an
// address that names bob.eth as its primary name gets it only once bob.eth's ETH address is that
// address, whoever owns bob.eth. See ens-resolution.test.ts for how the library is pointed at the
// devnet.

const STRANGER = "0x000000000000000000000000000000000000c0de";

interface EnsService {
  reverseOf(address: string): Promise<string | null>;
  owner(domain: string): Promise<string>;
}

describe("ENS judge: forward-verified primary names, registrants", () => {
  let w: EnsJudgeWorld;
  let sender: TxSender;
  let ens: EnsService;

  beforeAll(async () => {
    w = await startEnsJudgeWorld();
    const rpc = devnetRpc(w.rpcUrl);
    sender = await createTxSender(rpc, DEVNET_DEPLOYER);
    await pauseMining(rpc);
    await rpc.call("anvil_autoImpersonateAccount", [true]);
    const mainnet = (
      createRequire(import.meta.url)("@unstoppabledomains/resolution/build/config/ens-config.json") as {
        networks: Record<string, { contracts: Record<string, { address: string }> }>;
      }
    ).networks["1"].contracts;
    const byRole = new Map<string, string>([
      [mainnet.NameWrapper.address.toLowerCase(), w.ens.nameWrapper],
      [mainnet.BaseRegistrarImplementation.address.toLowerCase(), w.ens.baseRegistrar],
      [mainnet.ReverseRegistrar.address.toLowerCase(), w.ens.reverseRegistrar],
    ]);
    const provider = {
      async request(req: { method: string; params?: unknown }): Promise<unknown> {
        let params = (req.params ?? []) as unknown[];
        if (req.method === "eth_call") {
          const [tx, block] = params as [{ to: string; data: string }, unknown];
          params = [{ ...tx, to: byRole.get(tx.to.toLowerCase()) ?? tx.to }, block];
        }
        return rpc.call(req.method, params);
      },
    };
    const resolution = new Resolution({
      sourceConfig: { ens: { provider, network: "mainnet", registryAddress: w.ens.registry } },
    });
    ens = (resolution as unknown as { getService(n: string): { native: EnsService } }).getService(
      "ENS",
    ).native;
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  async function step(txs: Array<{ from: string; to: string; data: Hex }>): Promise<void> {
    const latest = await sender.rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    await sender.send(txs.map((t) => ({ ...t, from: t.from as Hex, to: t.to as Hex, gas: 300_000n })));
    await sender.mine({ timestamp: Number(latest.timestamp) + 1 });
    await w.crawl();
  }

  async function apiPrimary(address: string): Promise<string[]> {
    const res = await w.get(reversePath(address));
    expect(res.status).toBe(200);
    return (res.body.data as ApiRecord[]).map((r) => r.domain);
  }

  it("counts a primary name only while the name's ETH address points back, whoever owns it", async () => {
    const bob = w.names.find((n) => n.d.name === "bob.eth")!.d.owner;
    await sender.send([{ to: STRANGER as Hex, data: "0x", value: 10n ** 18n, gas: 21_000n }]);
    await sender.mine();
    // A stranger names bob.eth as its primary name: bob.eth's ETH address is still Bob's.
    await step([
      {
        from: STRANGER,
        to: w.ens.reverseRegistrar,
        data: realCallData("ReverseRegistrar", "setName", ["bob.eth"]),
      },
    ]);
    expect(await ens.reverseOf(STRANGER)).toBeNull();
    expect(await ens.reverseOf(bob)).toBe("bob.eth");
    expect(await apiPrimary(STRANGER)).toEqual([]);
    expect(await apiPrimary(bob)).toEqual(["bob.eth"]);

    // Bob points bob.eth's ETH address at the stranger: the stranger's primary name holds now,
    // Bob's does not (Bob still owns bob.eth).
    await step([
      {
        from: bob,
        to: w.ens.resolver,
        data: realCallData("PublicResolver", "setAddr", [namehash("bob.eth"), STRANGER]),
      },
    ]);
    expect(await ens.reverseOf(STRANGER)).toBe("bob.eth");
    expect(await ens.reverseOf(bob)).toBeNull();
    expect(await apiPrimary(STRANGER)).toEqual(["bob.eth"]);
    const res = await w.get(reversePath(STRANGER));
    expect((res.body.data as ApiRecord[])[0].ownerAddress).toBe(bob);
  }, 60_000);

  it("follows the registrant of an unwrapped name, not the registry owner a transfer leaves behind", async () => {
    const unwrapped = w.names.find(
      (n) => !n.choice.wrapped && n.choice.via === "controller" && n.d.expiresAt! > Date.now(),
    )!.d;
    const id = BigInt(labelhash(unwrapped.name.split(".")[0]));
    await step([
      {
        from: unwrapped.owner,
        to: w.ens.baseRegistrar,
        data: realCallData("BaseRegistrarImplementation", "transferFrom", [unwrapped.owner, STRANGER, id]),
      },
    ]);
    const registrant = await w.client.readContract({
      abi: loadRealArtifact("BaseRegistrarImplementation").abi,
      address: w.ens.baseRegistrar,
      functionName: "ownerOf",
      args: [id],
    });
    const registryOwner = await w.client.readContract({
      abi: loadRealArtifact("ENSRegistry").abi,
      address: w.ens.registry,
      functionName: "owner",
      args: [namehash(unwrapped.name)],
    });
    expect(String(registrant).toLowerCase()).toBe(STRANGER);
    expect(String(registryOwner).toLowerCase()).toBe(unwrapped.owner);
    const res = await w.get(resolvePath(unwrapped.name));
    expect((res.body.data as ApiRecord).ownerAddress).toBe(STRANGER);
    // The library answers the registry owner (a documented difference: the ENS manager's owner of
    // an unwrapped .eth name is the registrant).
    expect(String(await ens.owner(unwrapped.name)).toLowerCase()).toBe(unwrapped.owner);
  }, 60_000);
});
