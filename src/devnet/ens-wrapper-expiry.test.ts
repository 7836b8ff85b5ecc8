import { type Hex, toEventSelector } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensAdapter } from "../providers/ens/ens.adapter.js";
import { realEvents } from "../providers/ens/ens-real-abi.testing.js";
import type { DomainEvent, RawLog, SourceContracts } from "../providers/provider.js";
import { type AnvilInstance, findFreePortRange, randomPortBase, startAnvil } from "./anvil.js";
import { ensureArtifacts } from "./artifacts.js";
import { deployNetwork } from "./deploy.js";
import { DEVNET_DEPLOYER } from "./devnet.js";
import { realCallData } from "./real-ens.js";
import { devnetRpc } from "./rpc.js";
import { labelhash, namehash } from "./token-ids.js";
import { createTxSender, type TxSender } from "./tx-sender.js";

// The devnet runs the real NameWrapper (real-ens.ts); the ENS adapter, fetching with its own
// filters, must turn an extension after wrapping into the subname's new expiry (it was stale
// before: ExpiryExtended was not decoded).

const ALICE = "0x00000000000000000000000000000000000a11ce";
const PARENT_CANNOT_CONTROL = 0x10000;
const CANNOT_UNWRAP = 0x1;
const CANNOT_TRANSFER = 0x4;
const T0 = 1_750_000_000;

interface RpcLog {
  address: string;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  logIndex: Hex;
  transactionHash: Hex;
}

describe("devnet NameWrapper ExpiryExtended / FusesSet through the ENS adapter (anvil)", () => {
  let anvil: AnvilInstance;
  let sender: TxSender;
  let ens: SourceContracts;

  beforeAll(async () => {
    await ensureArtifacts();
    const port = await findFreePortRange(1, randomPortBase());
    anvil = await startAnvil({ chainId: 1, port, noMining: true, genesisTimestamp: T0 - 100 });
    sender = await createTxSender(devnetRpc(anvil.rpcUrl), DEVNET_DEPLOYER);
    // ALICE sends her own transactions (the real wrapper checks who sends).
    await sender.rpc.call("anvil_autoImpersonateAccount", [true]);
    await sender.rpc.call("anvil_setBalance", [ALICE, "0xde0b6b3a7640000"]);
    const deployed = await deployNetwork(sender, "ETHEREUM", { timestamp: T0 - 50 });
    const c = deployed.NAMESPACE_C;
    if (c === undefined) throw new Error("no ENS contracts on the devnet ETHEREUM network");
    ens = c;
  }, 120_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  async function fetchLogs(fromBlock: number): Promise<RawLog[]> {
    const out: RawLog[] = [];
    for (const f of ensAdapter.filters(ens)) {
      const logs = await sender.rpc.call<RpcLog[]>("eth_getLogs", [
        { address: f.address ?? undefined, topics: [f.topic0], fromBlock: `0x${fromBlock.toString(16)}` },
      ]);
      for (const l of logs)
        out.push({
          chainId: 1,
          blockNumber: Number(l.blockNumber),
          blockHash: l.blockHash,
          logIndex: Number(l.logIndex),
          transactionHash: l.transactionHash,
          address: l.address.toLowerCase(),
          topics: l.topics,
          data: l.data,
        });
    }
    return out.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  }

  it("a wrapped subname's expiry extended after wrapping is the one decoded last", async () => {
    const w = ens.addresses.nameWrapper as Hex;
    const parent = namehash("alice.eth");
    const sub = namehash("sub.alice.eth");
    const start = Number(await sender.rpc.call<Hex>("eth_blockNumber")) + 1;
    // Burning PARENT_CANNOT_CONTROL on a subname needs CANNOT_UNWRAP burnt on its parent.
    await sender.send([
      {
        to: w,
        data: realCallData("NameWrapper", "registerAndWrapETH2LD", [
          "alice",
          ALICE,
          BigInt(3 * 365 * 86_400),
          "0x0000000000000000000000000000000000000000",
          CANNOT_UNWRAP,
        ]),
        gas: 2_000_000n,
      },
    ]);
    await sender.mine({ timestamp: T0 - 1 });
    await sender.send([
      {
        from: ALICE,
        to: w,
        data: realCallData("NameWrapper", "setSubnodeRecord", [
          parent,
          "sub",
          ALICE,
          "0x0000000000000000000000000000000000000000",
          0n,
          PARENT_CANNOT_CONTROL,
          BigInt(T0 + 365 * 86_400),
        ]),
        gas: 2_000_000n,
      },
    ]);
    await sender.mine({ timestamp: T0 });
    await sender.send([
      {
        from: ALICE,
        to: w,
        data: realCallData("NameWrapper", "extendExpiry", [
          parent,
          labelhash("sub"),
          BigInt(T0 + 2 * 365 * 86_400),
        ]),
        gas: 500_000n,
      },
      {
        from: ALICE,
        to: w,
        data: realCallData("NameWrapper", "setFuses", [sub, CANNOT_UNWRAP | CANNOT_TRANSFER]),
        gas: 500_000n,
      },
    ]);
    await sender.mine({ timestamp: T0 + 10 });

    const logs = await fetchLogs(start);
    const wrapperTopics = new Set(logs.filter((l) => l.address === w.toLowerCase()).map((l) => l.topics[0]));
    // The real wrapper's events, and the adapter fetches them.
    for (const name of ["ExpiryExtended", "FusesSet"]) {
      const real = realEvents("NameWrapper").find((e) => e.name === name);
      expect(real).toBeDefined();
      expect(wrapperTopics.has(toEventSelector(real as never))).toBe(true);
    }
    const events: DomainEvent[] = [];
    for (const l of logs) {
      const r = ensAdapter.decode(l, ens);
      expect(r, `${l.topics[0]} from ${l.address}`).toMatchObject({ ok: true });
      if (r.ok) events.push(...r.events);
    }
    const subExpiries = events.filter((e) => e.type === "expiry" && e.tokenId === sub);
    expect(subExpiries).toEqual([
      { type: "expiry", tokenId: sub, expiresAt: T0 + 365 * 86_400 },
      { type: "expiry", tokenId: sub, expiresAt: T0 + 2 * 365 * 86_400 },
    ]);
    // A wrapped .eth 2LD keeps the registrar's expiry (the wrapper's is that plus the grace period).
    expect(events.filter((e) => e.type === "expiry" && e.tokenId === parent)).toEqual([
      { type: "expiry", tokenId: parent, expiresAt: T0 - 1 + 3 * 365 * 86_400 },
    ]);
  }, 120_000);
});
