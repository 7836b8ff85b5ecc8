import { normalizeName } from "../../domain/names.js";
import type { Network } from "../../domain/networks.js";
import { addressesOf, fail, roleOf } from "../log-decode.js";
import { namehash } from "../namehash.js";
import type { ProviderAdapter, SourceContracts } from "../provider.js";
import { decodeUnsFamily, ROOT_TOKEN, UNS_TOPICS } from "./uns-events.js";
import { mapUnsRecord } from "./uns-records.js";

/**
 * Mainnet UNSRegistry deployments (docs/chain-facts.md). The legacy CNSRegistry (.crypto names not yet
 * moved to UNS) and its resolvers are not included: see README.md.
 */
export const UNS_MAINNET = {
  ETHEREUM: { addresses: { registry: "0x049aba7510f45ba5b64ea9e658e342f904db358d" }, startBlock: 12_779_230 },
  POLYGON: { addresses: { registry: "0xa9a6a3626993d487d2dbda3173cf58ca1a9d9e9f" }, startBlock: 19_345_077 },
} as const satisfies Partial<Record<Network, SourceContracts>>;

/** The punycode ASCII form of a name (a single label: a TLD), or the name itself when it does not normalize. */
function asciiOf(name: string): string {
  if (/^[\x00-\x7f]*$/.test(name)) return name;
  const n = normalizeName(name.includes(".") ? name : `x.${name}`);
  if (!n.ok) return name;
  return name.includes(".") ? n.value.ascii : n.value.ascii.slice(2);
}

const FILTER_TOPICS = [
  UNS_TOPICS.Transfer,
  UNS_TOPICS.NewURI,
  UNS_TOPICS.Set,
  UNS_TOPICS.ResetRecords,
  UNS_TOPICS.SetReverse,
  UNS_TOPICS.RemoveReverse,
  UNS_TOPICS.SetExpiry,
];

const OPTIONS = {
  recordTopic: UNS_TOPICS.Set,
  expiry: true,
  tldParent: true,
  // UNS labels are ASCII in practice; the raw, Unicode and punycode forms all denote one name.
  tokenIdsOf: (raw: string, n: { name: string; ascii: string }) =>
    [...new Set([raw, n.name, n.ascii])].map(namehash),
};

/**
 * Unstoppable Domains (NAMESPACE_B): tokenId = EIP-137 namehash; NewURI is checked against it.
 *
 * @example unsAdapter.tokenIdOf("crypto") // "0x0f4a10a4f46c288cea365fcf45cccf0e9d901b945b9829ccdb54c10dc3cb7a6f"
 */
export const unsAdapter: ProviderAdapter = {
  protocol: "UNS",
  provider: "NAMESPACE_B",
  networks: ["ETHEREUM", "POLYGON"],
  mainnet: UNS_MAINNET,
  // TLD tokens (`MintingManager.addTld` mints each to the manager) are the registry's bookkeeping,
  // not names: their NewURI names the root as parent.
  tree: { isNameToken: (t) => t.parentTokenId !== ROOT_TOKEN },
  filters(contracts) {
    // NewKey is a no-op and not fetched. No registry, no filter: an empty address list would mean "any".
    const address = addressesOf(contracts, "registry");
    return address.length === 0 ? [] : [{ address, topic0: [...FILTER_TOPICS] }];
  },
  decode(log, contracts) {
    // FNS shares these topics on the same chains: only the configured registry is trusted.
    if (roleOf(contracts, log.address) !== "registry")
      return fail(`log from unexpected contract ${log.address}`);
    return decodeUnsFamily(log, OPTIONS);
  },
  mapRecord: mapUnsRecord,
  // The MintingManager issues only [a-z0-9-] labels: a Unicode name exists on chain in its
  // punycode form, so that is what its token id hashes.
  tokenIdOf: (name) => namehash(asciiOf(name)),
  normalizeName,
};
