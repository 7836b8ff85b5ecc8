import {
  type Hex,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  labelhash,
  namehash,
  zeroHash,
} from "viem";
import { loadRealArtifact } from "./real-artifacts.js";
import type { TxRequest } from "./tx-sender.js";

/**
 * The real ENS contracts (ens-contracts bytecode shipped in `@unstoppabledomains/uns/artifacts`),
 * by the role names of devnet.json and the ENS adapter. `resolver` is the PublicResolver the
 * controller and the reverse registrar trust (mainnet's current default); `oldResolver` is a
 * second PublicResolver instance, the one names move away from in a resolver change.
 */
export const REAL_ENS_CONTRACTS = {
  registry: "ENSRegistry",
  baseRegistrar: "BaseRegistrarImplementation",
  controller: "ETHRegistrarController",
  nameWrapper: "NameWrapper",
  resolver: "PublicResolver",
  reverseRegistrar: "ReverseRegistrar",
} as const;

export type RealEnsRole = keyof typeof REAL_ENS_CONTRACTS;
export type RealEnsAddresses = Record<RealEnsRole, Hex> & {
  /** A second PublicResolver (not a role the adapter reads: resolver events come from any address). */
  oldResolver: Hex;
  usdOracle: Hex;
  priceOracle: Hex;
};

/** Mainnet's commitment window (ETHRegistrarController 0x2535…303b): 60 s to 24 h. */
export const MIN_COMMITMENT_AGE = 60;
export const MAX_COMMITMENT_AGE = 86_400;
/** BaseRegistrarImplementation.GRACE_PERIOD. */
export const GRACE_PERIOD = 90 * 86_400;
/** ETH at 2,000 USD (8 decimals, as Chainlink's ETH/USD feed answers). */
export const USD_PER_ETH = 2_000n * 10n ** 8n;
/**
 * Mainnet's StablePriceOracle rent, attoUSD a second for 1, 2, 3, 4 and 5+ character labels
 * (5+ = 5 USD a year, 4 = 160, 3 = 640; 1 and 2 cannot be registered through the controller).
 */
export const RENT_PRICES = [0n, 0n, 20_294_266_869_609n, 5_073_566_717_402n, 158_548_959_919n] as const;

/** The wei a controller registration or renewal of `label` for `duration` seconds costs. */
export function rentPriceWei(label: string, duration: number): bigint {
  const len = [...label].length;
  const perSecond = RENT_PRICES[Math.min(len, RENT_PRICES.length) - 1];
  return (perSecond * BigInt(duration) * 10n ** 8n) / USD_PER_ETH;
}

export function realCallData(contract: string, functionName: string, args: readonly unknown[] = []): Hex {
  return encodeFunctionData({ abi: loadRealArtifact(contract).abi, functionName, args });
}

const DEPLOY_GAS = 8_000_000n;
const WIRING_GAS = 500_000n;

/**
 * The transactions that deploy and wire the real ENS contracts the way mainnet has them, from
 * `from` starting at `nonce`:
 *
 * - ENSRegistry, root owned by the deployer; `eth` → BaseRegistrarImplementation; `reverse` →
 *   deployer, `addr.reverse` → ReverseRegistrar (before the NameWrapper, whose constructor claims
 *   its own reverse node through it).
 * - DummyOracle (the USD/ETH feed) and StablePriceOracle with mainnet's rent prices.
 * - NameWrapper (no metadata service: only `uri()` would call it); controller of the registrar.
 * - ETHRegistrarController (60 s / 24 h commitments); controller of the wrapper and of the
 *   reverse registrar.
 * - PublicResolver trusting the controller and the reverse registrar, the reverse registrar's
 *   default resolver; a second PublicResolver for resolver changes.
 * - The deployer is a NameWrapper controller too: labels under 3 characters, which the controller
 *   refuses (`valid`), are registered through `registerAndWrapETH2LD` (README.md, decisions).
 */
export function planRealEns(from: Hex, nonce: number): { txs: TxRequest[]; addresses: RealEnsAddresses } {
  const txs: TxRequest[] = [];
  const deploy = (name: string, args: readonly unknown[] = []): Hex => {
    const { abi, bytecode } = loadRealArtifact(name);
    const address = getContractAddress({ from, nonce: BigInt(nonce++) }).toLowerCase() as Hex;
    txs.push({ data: encodeDeployData({ abi, bytecode, args }), gas: DEPLOY_GAS, label: `deploy ${name}` });
    return address;
  };
  const call = (to: Hex, contract: string, fn: string, args: readonly unknown[]) => {
    nonce++;
    txs.push({ to, data: realCallData(contract, fn, args), gas: WIRING_GAS, label: `${contract}.${fn}` });
  };

  const registry = deploy("ENSRegistry");
  const baseRegistrar = deploy("BaseRegistrarImplementation", [registry, namehash("eth")]);
  call(registry, "ENSRegistry", "setSubnodeOwner", [zeroHash, labelhash("eth"), baseRegistrar]);
  const reverseRegistrar = deploy("ReverseRegistrar", [registry]);
  call(registry, "ENSRegistry", "setSubnodeOwner", [zeroHash, labelhash("reverse"), from]);
  call(registry, "ENSRegistry", "setSubnodeOwner", [
    namehash("reverse"),
    labelhash("addr"),
    reverseRegistrar,
  ]);
  const usdOracle = deploy("DummyOracle", [USD_PER_ETH]);
  const priceOracle = deploy("StablePriceOracle", [usdOracle, [...RENT_PRICES]]);
  const nameWrapper = deploy("NameWrapper", [
    registry,
    baseRegistrar,
    "0x0000000000000000000000000000000000000000",
  ]);
  call(baseRegistrar, "BaseRegistrarImplementation", "addController", [nameWrapper]);
  const controller = deploy("ETHRegistrarController", [
    baseRegistrar,
    priceOracle,
    BigInt(MIN_COMMITMENT_AGE),
    BigInt(MAX_COMMITMENT_AGE),
    reverseRegistrar,
    nameWrapper,
    registry,
  ]);
  call(nameWrapper, "NameWrapper", "setController", [controller, true]);
  call(nameWrapper, "NameWrapper", "setController", [from, true]);
  call(reverseRegistrar, "ReverseRegistrar", "setController", [controller, true]);
  const resolver = deploy("PublicResolver", [registry, nameWrapper, controller, reverseRegistrar]);
  call(reverseRegistrar, "ReverseRegistrar", "setDefaultResolver", [resolver]);
  const oldResolver = deploy("PublicResolver", [registry, nameWrapper, controller, reverseRegistrar]);
  return {
    txs,
    addresses: {
      registry,
      baseRegistrar,
      controller,
      nameWrapper,
      resolver,
      reverseRegistrar,
      oldResolver,
      usdOracle,
      priceOracle,
    },
  };
}
