import { type Abi, encodeFunctionData, type Hex } from "viem";
import { type RealArtifact, loadRealArtifact, realAbi } from "./real-artifacts.js";

/**
 * Deploys the real Unstoppable Domains contracts (`@unstoppabledomains/uns` artifacts) the way
 * mainnet has them: UNSRegistry, MintingManager and ProxyReader behind transparent ERC-1967
 * proxies owned by one ProxyAdmin, initialized through the proxies' constructors; the
 * MintingManager is the registry's minting manager, the deployer its owner and minter; the TLDs
 * are added through `MintingManager.addTld` (which mints each TLD token to the manager). On
 * ETHEREUM the legacy CNS (.crypto) is deployed too: CNSRegistry, its MintingController (a
 * registry controller, the deployer its minter) and the CNS Resolver; UNSRegistry and
 * ProxyReader are initialized with the CNS registry as on mainnet.
 */

/** What deploy.ts lends a protocol's deployment: creation and calls at the next nonces. */
export interface DeployPlanner {
  readonly from: Hex;
  /** Plans a contract creation and returns its (lower-case) address. */
  deployReal(name: string, artifact: RealArtifact, args?: readonly unknown[]): Hex;
  /** Plans a call. */
  callReal(to: Hex, data: Hex, label: string): void;
  /** The address the creation `ahead` transactions from now will get (0 = the next one). */
  addressAhead(ahead: number): Hex;
}

/**
 * TLDs added on both chains: the fixture world's UNS TLDs, the bulk worlds' `bench` and the
 * simulation's `sim` (devnet only) and a few more that mainnet sells. None is expirable, as on mainnet for these (mainnet's
 * expirable TLDs, such as `pw`, are listed in EXPIRABLE_TLDS).
 */
export const UNS_TLDS: readonly string[] = [
  "crypto",
  "wallet",
  "x",
  "nft",
  "blockchain",
  "bitcoin",
  "dao",
  "888",
  "zil",
  "klever",
  "hi",
  "kresus",
  "polygon",
  "anime",
  "manga",
  "binanceus",
  "go",
  "bench",
  "sim",
];
export const EXPIRABLE_TLDS: readonly string[] = ["pw"];

/** The token URI prefix mainnet uses. */
const URI_PREFIX = "https://metadata.unstoppabledomains.com/metadata/";

const ZERO: Hex = "0x0000000000000000000000000000000000000000";

/** Roles of the UNS source in devnet.json (the adapter reads `registry`, `cnsRegistry`, `cnsResolver`). */
export interface UnsAddresses {
  registry: Hex;
  mintingManager: Hex;
  proxyReader: Hex;
  proxyAdmin: Hex;
  cnsRegistry?: Hex;
  cnsMintingController?: Hex;
  cnsResolver?: Hex;
}

export function unsCall(contract: string, functionName: string, args: readonly unknown[] = []): Hex {
  return encodeFunctionData({ abi: realAbi(contract) as Abi, functionName, args });
}

/** Plans the real UNS (and, with `withCns`, the legacy CNS) of one chain. */
export function planRealUns(p: DeployPlanner, options: { withCns: boolean }): UnsAddresses {
  const proxyAdmin = p.deployReal("ProxyAdmin", loadRealArtifact("ProxyAdmin"));
  const registryImpl = p.deployReal("UNSRegistry (implementation)", loadRealArtifact("UNSRegistry"));
  const managerImpl = p.deployReal("MintingManager (implementation)", loadRealArtifact("MintingManager"));
  const readerImpl = p.deployReal("ProxyReader (implementation)", loadRealArtifact("ProxyReader"));
  let cnsRegistry: Hex | undefined;
  let cnsMintingController: Hex | undefined;
  let cnsResolver: Hex | undefined;
  if (options.withCns) {
    cnsRegistry = p.deployReal("CNSRegistry", loadRealArtifact("CNSRegistry"));
    cnsMintingController = p.deployReal("MintingController", loadRealArtifact("MintingController"), [
      cnsRegistry,
    ]);
    cnsResolver = p.deployReal("Resolver", loadRealArtifact("Resolver"), [cnsRegistry, cnsMintingController]);
  }
  // The three proxies come next, in this order: their addresses are known before they exist.
  const registry = p.addressAhead(0);
  const mintingManager = p.addressAhead(1);
  const proxy = loadRealArtifact("TransparentUpgradeableProxy");
  p.deployReal("UNSRegistry (proxy)", proxy, [
    registryImpl,
    proxyAdmin,
    unsCall("UNSRegistry", "initialize", [mintingManager, cnsRegistry ?? ZERO, ZERO, ZERO]),
  ]);
  p.deployReal("MintingManager (proxy)", proxy, [
    managerImpl,
    proxyAdmin,
    // No CNS minting controller: new .crypto names are UNS tokens (the legacy CNS names are
    // minted directly through the CNS MintingController, see seed-uns.ts).
    unsCall("MintingManager", "initialize", [registry, ZERO, ZERO, ZERO, ZERO, ZERO]),
  ]);
  const proxyReader = p.deployReal("ProxyReader (proxy)", proxy, [
    readerImpl,
    proxyAdmin,
    unsCall("ProxyReader", "initialize", [registry, cnsRegistry ?? ZERO]),
  ]);

  p.callReal(mintingManager, unsCall("MintingManager", "addMinter", [p.from]), "MintingManager.addMinter");
  p.callReal(
    mintingManager,
    unsCall("MintingManager", "addProxyReaders", [[proxyReader]]),
    "MintingManager.addProxyReaders",
  );
  p.callReal(
    mintingManager,
    unsCall("MintingManager", "setTokenURIPrefix", [URI_PREFIX]),
    "MintingManager.setTokenURIPrefix",
  );
  for (const tld of UNS_TLDS) {
    p.callReal(mintingManager, unsCall("MintingManager", "addTld", [tld, false]), `addTld ${tld}`);
  }
  for (const tld of EXPIRABLE_TLDS) {
    p.callReal(mintingManager, unsCall("MintingManager", "addTld", [tld, true]), `addTld ${tld}`);
  }
  if (cnsRegistry && cnsMintingController) {
    p.callReal(
      cnsRegistry,
      unsCall("CNSRegistry", "addController", [cnsMintingController]),
      "CNSRegistry.addController",
    );
  }
  const out: UnsAddresses = { registry, mintingManager, proxyReader, proxyAdmin };
  if (cnsRegistry && cnsMintingController && cnsResolver) {
    out.cnsRegistry = cnsRegistry;
    out.cnsMintingController = cnsMintingController;
    out.cnsResolver = cnsResolver;
  }
  return out;
}
