import { type Hex, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_DEPLOYER } from "../../src/devnet/devnet.js";
import { GRACE_PERIOD } from "../../src/devnet/real-ens.js";
import { loadRealArtifact } from "../../src/devnet/real-artifacts.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { controllerRegistration } from "../../src/devnet/real-ens-transactions.js";
import { labelhash, namehash } from "../../src/devnet/token-ids.js";
import { createTxSender, pauseMining, type TxSender } from "../../src/devnet/tx-sender.js";
import { mapEnsRecord } from "../../src/providers/ens/ens-records.js";
import { type ApiRecord, type EnsJudgeWorld, resolvePath, startEnsJudgeWorld } from "./ens-judge-harness.js";

// A .eth name through its whole life on the real contracts, with the API's clock on the chain's:
// registered (28 days, the controller's minimum), in its 90-day grace period, released, and
// registered again by someone else. At each stage the chain is read with eth_call and compared
// with what the API serves (docs/records.md, "ENS expiry states").

const LABEL = "graceful";
const NAME = `${LABEL}.eth`;
const FIRST = "0x00000000000000000000000000000000000a11ce";
const SECOND = "0x0000000000000000000000000000000000000b0b";
const DAY = 86_400;

describe("ENS judge: expiry, grace period and re-registration on the real contracts", () => {
  let w: EnsJudgeWorld;
  let sender: TxSender;
  let chainNow = 0;

  beforeAll(async () => {
    w = await startEnsJudgeWorld({ clock: () => chainNow * 1000 });
    sender = await createTxSender(devnetRpc(w.rpcUrl), DEVNET_DEPLOYER);
    await pauseMining(sender.rpc);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  const call = async (contract: string, address: string, fn: string, args: readonly unknown[] = []) => {
    try {
      return await w.client.readContract({
        abi: loadRealArtifact(contract).abi,
        address: address as Hex,
        functionName: fn,
        args,
      });
    } catch {
      return undefined;
    }
  };

  async function mineAt(timestamp: number): Promise<void> {
    await sender.mine({ timestamp });
    chainNow = timestamp;
  }

  async function register(owner: string, records: Array<[string, string]>): Promise<number> {
    const latest = await sender.rpc.call<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    const t = Number(latest.timestamp) + 10;
    const r = controllerRegistration(w.ens, LABEL, owner as Hex, 28 * DAY, w.ens.resolver, records);
    await sender.send([r.commit]);
    await mineAt(t);
    await sender.send([r.register]);
    await mineAt(t + 61);
    await w.crawl();
    return Number(
      await call("BaseRegistrarImplementation", w.ens.baseRegistrar, "nameExpires", [
        BigInt(labelhash(LABEL)),
      ]),
    );
  }

  /** What the contracts answer about the name now. */
  async function chain() {
    const node = namehash(NAME);
    const resolver = String(await call("ENSRegistry", w.ens.registry, "resolver", [node]));
    const records: Record<string, string> = {};
    const url = String(await call("PublicResolver", resolver, "text", [node, "url"]));
    const eth = String(await call("PublicResolver", resolver, "addr", [node, 60n])).toLowerCase();
    for (const [k, v] of [
      ["text.url", url],
      ["addr.60", eth],
    ])
      if (v !== "" && v !== "0x") for (const m of mapEnsRecord(k, v)) records[m.key] = m.value;
    const registrant = await call("BaseRegistrarImplementation", w.ens.baseRegistrar, "ownerOf", [
      BigInt(labelhash(LABEL)),
    ]);
    return {
      holder: String(await call("NameWrapper", w.ens.nameWrapper, "ownerOf", [BigInt(node)])).toLowerCase(),
      registrantReverts: registrant === undefined,
      available: (await call("ETHRegistrarController", w.ens.controller, "available", [LABEL])) as boolean,
      records,
    };
  }

  async function api(all: boolean) {
    const res = await (all ? w.get : w.getDefault)(resolvePath(NAME));
    return { status: res.status, data: res.body.data as ApiRecord };
  }

  it("follows the name from registration through grace and release to a new registrant", async () => {
    const differences: string[] = [];
    const sorted = (r: Record<string, string>) => JSON.stringify(Object.entries(r).sort());

    // Active.
    const expires = await register(FIRST, [
      ["text.url", "https://first.example.com"],
      ["addr.60", FIRST],
    ]);
    let c = await chain();
    expect(c).toMatchObject({ holder: FIRST, registrantReverts: false, available: false });
    let a = await api(false);
    if (a.status !== 200 || a.data.ownerAddress !== c.holder)
      differences.push(`active: API ${a.status} ${a.data?.ownerAddress}`);
    if (a.status === 200 && sorted(a.data.records) !== sorted(c.records))
      differences.push(`active: records API ${sorted(a.data.records)}, chain ${sorted(c.records)}`);

    // Grace period: the registrar no longer answers, the wrapper still names the holder, nobody
    // else can register it.
    await mineAt(expires + DAY);
    await w.crawl();
    c = await chain();
    expect(c).toMatchObject({ holder: FIRST, registrantReverts: true, available: false });
    if ((await api(false)).status !== 404) differences.push("grace: served to a default project");
    a = await api(true);
    if (a.status !== 200 || a.data.ownerAddress !== FIRST || !a.data.info.tags.includes("expired"))
      differences.push(`grace: includeExpired API ${a.status} ${a.data?.ownerAddress} ${a.data?.info.tags}`);
    if (a.status === 200 && sorted(a.data.records) !== sorted(c.records))
      differences.push(`grace: records API ${sorted(a.data.records)}, chain ${sorted(c.records)}`);

    // Released: anyone may register it; the wrapper answers the zero address.
    await mineAt(expires + GRACE_PERIOD + DAY);
    await w.crawl();
    c = await chain();
    expect(c).toMatchObject({ holder: zeroAddress, registrantReverts: true, available: true });
    if ((await api(false)).status !== 404) differences.push("released: served to a default project");
    a = await api(true);
    if (a.status !== 200 || a.data.ownerAddress !== FIRST || !a.data.info.tags.includes("expired"))
      differences.push(
        `released: includeExpired API ${a.status} ${a.data?.ownerAddress} ${a.data?.info.tags}`,
      );

    // Registered again by someone else, on the same resolver: the new holder, and the resolver's
    // records as they are (the old ETH address stays until the new owner changes it).
    await register(SECOND, [["text.url", "https://second.example.com"]]);
    c = await chain();
    expect(c).toMatchObject({ holder: SECOND, registrantReverts: false, available: false });
    expect(c.records["token.ETH.0"]).toBe(FIRST);
    a = await api(false);
    if (a.status !== 200 || a.data.ownerAddress !== SECOND)
      differences.push(`registered again: API ${a.status} ${a.data?.ownerAddress}`);
    if (a.status === 200 && sorted(a.data.records) !== sorted(c.records))
      differences.push(`registered again: records API ${sorted(a.data.records)}, chain ${sorted(c.records)}`);
    if (a.status === 200 && a.data.info.tags.includes("expired"))
      differences.push("registered again: tagged expired");

    expect(differences).toEqual([]);
  }, 120_000);
});
