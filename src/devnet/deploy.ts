import { type Abi, type Hex, encodeDeployData, encodeFunctionData, getContractAddress } from "viem";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { SourceContracts } from "../providers/provider.js";
import { type ContractName, abiOf, loadArtifact } from "./artifacts.js";
import { DEVNET_GATEWAY_SIGNER } from "./ens-gateway-answer.js";
import { ensGatewayUrl } from "./ens-gateway.js";
import { type DeployPlanner, planRealUns } from "./real-uns.js";
import { planRealEns, REAL_ENS_CONTRACTS, type RealEnsAddresses } from "./real-ens.js";
import type { TxRequest, TxSender } from "./tx-sender.js";

/**
 * What the devnet deploys where, mirroring mainnet: ENS on ETHEREUM; UNS on ETHEREUM and
 * POLYGON; FNS on POLYGON, BSC and AURORA.
 */
const DEVNET_LAYOUT = {
  ETHEREUM: ["NAMESPACE_C", "NAMESPACE_B"],
  POLYGON: ["NAMESPACE_B", "NAMESPACE_A"],
  BSC: ["NAMESPACE_A"],
  AURORA: ["NAMESPACE_A"],
} as const satisfies Partial<Record<Network, readonly Provider[]>>;

export type DevnetNetworkName = keyof typeof DEVNET_LAYOUT;
export const DEVNET_NETWORKS: readonly DevnetNetworkName[] = ["ETHEREUM", "POLYGON", "BSC", "AURORA"];

/** ENS contract roles in devnet.json (the adapter's roles, and the extra contracts of real-ens.ts). */
export const ENS_ROLES = {
  ...REAL_ENS_CONTRACTS,
  oldResolver: "PublicResolver",
  usdOracle: "DummyOracle",
  priceOracle: "StablePriceOracle",
} as const;

export type EnsRole = keyof typeof ENS_ROLES;
/**
 * The ENS contracts of devnet.json: the real ones, and our OffchainResolver
 * (contracts/ens-offchain/), the resolver of the names answered by the devnet's CCIP-Read gateway
 * (ens-gateway.ts). Optional: a devnet saved before it existed has none.
 */
export type EnsAddresses = RealEnsAddresses & { offchainResolver?: Hex };

const DEPLOY_GAS = 8_000_000n;
const WIRING_GAS = 500_000n;

export function callData(contract: ContractName, functionName: string, args: readonly unknown[] = []): Hex {
  return encodeFunctionData({ abi: abiOf(contract) as Abi, functionName, args });
}

interface Plan {
  txs: TxRequest[];
  contracts: Partial<Record<Provider, Record<string, Hex>>>;
}

function planDeploys(sender: TxSender, network: DevnetNetworkName, ensGateway: string): Plan {
  const from = sender.from;
  let nonce = sender.nonce;
  const txs: TxRequest[] = [];
  const deploy = (name: ContractName, args: readonly unknown[] = []): Hex => {
    const { abi, bytecode } = loadArtifact(name);
    const address = getContractAddress({ from, nonce: BigInt(nonce++) }).toLowerCase() as Hex;
    txs.push({ data: encodeDeployData({ abi, bytecode, args }), gas: DEPLOY_GAS, label: `deploy ${name}` });
    return address;
  };
  // The protocols' own contracts (real-artifacts.ts): creations and calls at the same nonces.
  const planner: DeployPlanner = {
    from,
    deployReal(name, { abi, bytecode }, args = []) {
      const address = getContractAddress({ from, nonce: BigInt(nonce++) }).toLowerCase() as Hex;
      txs.push({ data: encodeDeployData({ abi, bytecode, args }), gas: DEPLOY_GAS, label: `deploy ${name}` });
      return address;
    },
    callReal(to, data, label) {
      nonce++;
      txs.push({ to, data, gas: WIRING_GAS, label });
    },
    addressAhead: (ahead) => getContractAddress({ from, nonce: BigInt(nonce + ahead) }).toLowerCase() as Hex,
  };

  const contracts: Plan["contracts"] = {};
  for (const provider of DEVNET_LAYOUT[network] as readonly Provider[]) {
    if (provider === "NAMESPACE_A") contracts[provider] = { registry: deploy("FNSRegistry") };
    else if (provider === "NAMESPACE_B")
      contracts[provider] = { ...planRealUns(planner, { withCns: network === "ETHEREUM" }) };
    else if (provider === "NAMESPACE_C") {
      // The real ENS contracts, wired as on mainnet (real-ens.ts).
      const ens = planRealEns(from, nonce);
      nonce += ens.txs.length;
      txs.push(...ens.txs);
      contracts[provider] = ens.addresses;
    }
  }
  // Last, so that every other contract keeps the address it had before this one existed.
  if (contracts.NAMESPACE_C) {
    contracts.NAMESPACE_C.offchainResolver = deploy("OffchainResolver", [
      ensGateway,
      [DEVNET_GATEWAY_SIGNER],
    ]);
  }
  return { txs, contracts };
}

/**
 * Deploys the registries of one network in one block (mined at `timestamp` when given) and
 * returns them as `SourceContracts`, start block = that block. `ensGatewayUrl` is the URL
 * template the ENS OffchainResolver is deployed with (a port-0 placeholder when no gateway runs).
 */
export async function deployNetwork(
  sender: TxSender,
  network: DevnetNetworkName,
  options: { timestamp?: number; ensGatewayUrl?: string } = {},
): Promise<Partial<Record<Provider, SourceContracts>>> {
  const plan = planDeploys(sender, network, options.ensGatewayUrl ?? ensGatewayUrl(0));
  const before = Number(await sender.rpc.call<Hex>("eth_blockNumber"));
  await sender.send(plan.txs);
  await sender.mine(options);
  const out: Partial<Record<Provider, SourceContracts>> = {};
  for (const [provider, addresses] of Object.entries(plan.contracts) as Array<
    [Provider, Record<string, Hex>]
  >) {
    out[provider] = { addresses, startBlock: before + 1 };
  }
  return out;
}
