import { normalizeName } from "../../domain/names.js";
import type { Network } from "../../domain/networks.js";
import { addressesOf, fail, roleOf } from "../log-decode.js";
import { fnsTokenId } from "../namehash.js";
import type { ProviderAdapter, SourceContracts } from "../provider.js";
import { decodeUnsFamily, FNS_SET_RECORD, UNS_TOPICS } from "../uns/uns-events.js";

const FNS_REGISTRY = "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65";

/**
 * Mainnet Freename registry: one proxy address on every chain (docs/chain-facts.md). Its deploy
 * blocks are not published, so `startBlock` is 0, which makes the crawler find the deployment by
 * bisecting eth_getCode (docs/crawler.md).
 */
export const FNS_MAINNET = {
  POLYGON: { addresses: { registry: FNS_REGISTRY }, startBlock: 0 },
  BSC: { addresses: { registry: FNS_REGISTRY }, startBlock: 0 },
  AURORA: { addresses: { registry: FNS_REGISTRY }, startBlock: 0 },
} as const satisfies Partial<Record<Network, SourceContracts>>;

/** The FNS events that change the map (docs/chain-facts.md). NewKey is a no-op and not fetched. */
export const FNS_TOPICS = {
  Transfer: UNS_TOPICS.Transfer,
  NewURI: UNS_TOPICS.NewURI,
  SetRecord: FNS_SET_RECORD,
  ResetRecords: UNS_TOPICS.ResetRecords,
  SetReverse: UNS_TOPICS.SetReverse,
  RemoveReverse: UNS_TOPICS.RemoveReverse,
} as const;

const OPTIONS = {
  recordTopic: FNS_SET_RECORD,
  expiry: false,
  // Freename hashes punycode ASCII labels; the raw form is accepted too in case a registry hashed
  // the Unicode bytes it published. Both denote the same normalized name.
  tokenIdsOf: (raw: string, n: { name: string; ascii: string }) =>
    [...new Set([n.ascii, raw])].map(fnsTokenId),
};

/**
 * Freename (NAMESPACE_A), a UNS fork. Token ids are Freename's own scheme (namehash.ts fnsTokenId),
 * and native record keys are already canonical (`token.ETH.0`, `record.A.0`, …): mapping is identity.
 *
 * @example fnsAdapter.tokenIdOf("cederico.metaverse") // uint256 27852860…137670 as 0x hex
 */
export const fnsAdapter: ProviderAdapter = {
  protocol: "FNS",
  provider: "NAMESPACE_A",
  networks: ["POLYGON", "BSC", "AURORA"],
  mainnet: FNS_MAINNET,
  filters(contracts) {
    // No registry, no filter: an empty address list would mean "any address" to some clients.
    const address = addressesOf(contracts, "registry");
    return address.length === 0 ? [] : [{ address, topic0: Object.values(FNS_TOPICS) }];
  },
  decode(log, contracts) {
    // UNS emits identical topics on Polygon: only the configured registry is trusted.
    if (roleOf(contracts, log.address) !== "registry")
      return fail(`log from unexpected contract ${log.address}`);
    return decodeUnsFamily(log, OPTIONS);
  },
  mapRecord(nativeKey, nativeValue) {
    return nativeValue === "" ? [] : [{ key: nativeKey, value: nativeValue }];
  },
  tokenIdOf: fnsTokenId,
  normalizeName,
};
