import { normalizeName } from "../../domain/names.js";
import type { Network } from "../../domain/networks.js";
import { addressesOf, fail, hasTopics, ok, roleOf, topicAddress, topicId } from "../log-decode.js";
import { namehash } from "../namehash.js";
import type { DecodeResult, Hex, LogFilter, ProviderAdapter, RawLog, SourceContracts } from "../provider.js";
import { decodeUnsFamily, ROOT_TOKEN, UNS_TOPICS } from "./uns-events.js";
import { mapUnsRecord } from "./uns-records.js";

/**
 * Mainnet deployments (docs/chain-facts.md): the UNSRegistry on both chains and, on ETHEREUM, the
 * legacy CNSRegistry (.crypto names never moved to UNS) with its resolvers. The ETHEREUM source
 * starts at the CNSRegistry's deployment (the UNSRegistry came at 12,779,230).
 */
export const UNS_MAINNET = {
  ETHEREUM: {
    addresses: {
      registry: "0x049aba7510f45ba5b64ea9e658e342f904db358d",
      cnsRegistry: "0xd1e5b0ff1287aa9f9a268759062e4ab08b9dacbe",
      cnsResolver: "0xb66dce2da6afaaa98f2013446dbcb0f4b0ab2842",
      "cnsResolver:legacy-a1ca": "0xa1cac442be6673c49f8e74ffc7c4fd746f3cbd0d",
      "cnsResolver:legacy-878b": "0x878bc2f3f717766ab69c0a5f9a6144931e61aed3",
    },
    startBlock: 9_082_251,
  },
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

/** CNSRegistry only: Resolve(uint256 indexed tokenId, address indexed to). */
export const CNS_RESOLVE: Hex = "0xb1b34e6d89e1c584527d447f4b29ffad55635a37edeeb564939a6483401b31a5";
const CNS_REGISTRY_TOPICS: Hex[] = [UNS_TOPICS.Transfer, UNS_TOPICS.NewURI, CNS_RESOLVE];
const CNS_RESOLVER_TOPICS: Hex[] = [UNS_TOPICS.Set, UNS_TOPICS.ResetRecords];
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

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
    // NewKey is a no-op and not fetched. No address, no filter: an empty address list would mean "any".
    const filters: LogFilter[] = [];
    const add = (address: string[], topic0: Hex[]) => {
      if (address.length > 0) filters.push({ address, topic0 });
    };
    add(addressesOf(contracts, "registry"), [...FILTER_TOPICS]);
    add(addressesOf(contracts, "cnsRegistry"), CNS_REGISTRY_TOPICS);
    add(addressesOf(contracts, "cnsResolver"), CNS_RESOLVER_TOPICS);
    return filters;
  },
  decode(log, contracts) {
    // FNS shares these topics on the same chains: only the configured contracts are trusted.
    const role = roleOf(contracts, log.address);
    if (role === "registry") {
      const r = decodeUnsFamily(log, OPTIONS);
      // UNSRegistry.resolverOf(token) is the registry itself while the token exists: a mint makes
      // it the token's resolver (after a CNS migration, the CNS resolver's records stop counting).
      const t = r.ok ? r.events[0] : undefined;
      if (t?.type === "transfer" && t.from === ZERO_ADDRESS && t.to !== ZERO_ADDRESS) {
        return ok(t, { type: "resolver", tokenId: t.tokenId, resolver: log.address.toLowerCase() });
      }
      return r;
    }
    if (role === "cnsRegistry") return decodeCnsRegistry(log);
    if (role === "cnsResolver") {
      // Set and ResetRecords of a CNS resolver: they count while it is the token's resolver.
      const topic0 = log.topics[0]?.toLowerCase() as Hex | undefined;
      if (topic0 === undefined || !CNS_RESOLVER_TOPICS.includes(topic0)) {
        return fail(`CNS resolver event topic ${topic0 ?? "(none)"} not decoded`);
      }
      return decodeUnsFamily(log, OPTIONS);
    }
    return fail(`log from unexpected contract ${log.address}`);
  },
  mapRecord: mapUnsRecord,
  // The MintingManager issues only [a-z0-9-] labels: a Unicode name exists on chain in its
  // punycode form, so that is what its token id hashes.
  tokenIdOf: (name) => namehash(asciiOf(name)),
  normalizeName,
};

/**
 * CNSRegistry: Transfer and NewURI as UNS's; `Resolve(tokenId, to)` names the token's resolver,
 * whose `Set`/`ResetRecords` then count. Every transfer other than a mint or a burn also clears
 * the resolver: the registry's `_transferFrom` deletes it without an event (`setOwner` keeps it,
 * but emits the same Transfer, so a name moved with `setOwner` reads without records until its
 * owner sets a resolver again; README.md, Quirks).
 */
function decodeCnsRegistry(log: RawLog): DecodeResult {
  const topic0 = log.topics[0]?.toLowerCase();
  if (topic0 === CNS_RESOLVE) {
    const tokenId = hasTopics(log, 3) ? topicId(log.topics[1]) : null;
    const resolver = hasTopics(log, 3) ? topicAddress(log.topics[2]) : null;
    if (tokenId === null || resolver === null) return fail("malformed Resolve topics");
    return ok({ type: "resolver", tokenId, resolver });
  }
  if (topic0 !== UNS_TOPICS.Transfer && topic0 !== UNS_TOPICS.NewURI) {
    return fail(`CNS registry event topic ${topic0 ?? "(none)"} not decoded`);
  }
  const r = decodeUnsFamily(log, OPTIONS);
  const t = r.ok ? r.events[0] : undefined;
  if (t?.type === "transfer" && t.from !== ZERO_ADDRESS && t.to !== ZERO_ADDRESS) {
    return ok(t, { type: "resolver", tokenId: t.tokenId, resolver: ZERO_ADDRESS });
  }
  return r;
}
