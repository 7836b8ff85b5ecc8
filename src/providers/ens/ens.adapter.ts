import { normalizeEnsName } from "../../domain/names.js";
import type { Network } from "../../domain/networks.js";
import { addressesOf } from "../log-decode.js";
import { namehash } from "../namehash.js";
import type { LogFilter, ProviderAdapter, SourceContracts } from "../provider.js";
import { decodeEnsLog } from "./ens-decode.js";
import { ensNameTree } from "./ens-name-tree.js";
import { mapEnsRecord } from "./ens-records.js";
import { ENS_TOPICS } from "./ens-topics.js";

/**
 * ENS mainnet contracts (docs/chain-facts.md). Roles: `registry`, `baseRegistrar`, `controller` (a
 * `:variant` suffix lists several), `nameWrapper`, `reverseRegistrar`, `defaultReverseRegistrar`.
 * The start block is ENSRegistryWithFallback's deployment; the pre-2020 registry is left out
 * (README.md, "Quirks").
 */
export const ENS_MAINNET = {
  ETHEREUM: {
    addresses: {
      registry: "0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e",
      baseRegistrar: "0x57f1887a8bf19b14fc0df6fd9b2acc9af147ea85",
      "controller:legacy": "0x283af0b28c62c092c9727f1ee09c02ca627eb7f5",
      "controller:wrapped": "0x253553366da8546fc250f225fe3d25d0c782303b",
      "controller:unwrapped": "0x59e16fccd424cc24e280be16e11bcd56fb0ce547",
      nameWrapper: "0xd4416b13d2b3a9abae7acd5d6c2bbdbe25686401",
      reverseRegistrar: "0xa58e81fe9b61b5c3fe2afd33cf304c454abfc7cb",
      defaultReverseRegistrar: "0x283f227c4bd38ece252c4ae7ece650b0e913f1f9",
    },
    startBlock: 9_380_380,
  },
} as const satisfies Partial<Record<Network, SourceContracts>>;

const T = ENS_TOPICS;
const ROLE_TOPICS: Array<[role: string, topics: `0x${string}`[]]> = [
  ["registry", [T.NewOwner, T.RegistryTransfer, T.NewResolver]],
  ["baseRegistrar", [T.Erc721Transfer, T.BaseNameRegistered, T.BaseNameRenewed, T.NameMigrated]],
  [
    "controller",
    [
      T.LegacyNameRegistered,
      T.WrappedNameRegistered,
      T.UnwrappedNameRegistered,
      T.ControllerNameRenewed,
      T.UnwrappedNameRenewed,
    ],
  ],
  // FusesSet decodes to nothing (fuses change nothing in the map, README.md); fetching it keeps
  // "every decoded topic is fetched" true and costs one log per fuse change.
  [
    "nameWrapper",
    [T.NameWrapped, T.NameUnwrapped, T.ExpiryExtended, T.FusesSet, T.TransferSingle, T.TransferBatch],
  ],
  ["defaultReverseRegistrar", [T.NameForAddrChanged]],
];

/**
 * Topics decoded from any address. ReverseClaimed is among them because it is checked, not
 * trusted (its node must be the address's reverse node), which also covers the older reverse
 * registrars. The legacy value-less TextChanged is fetched so that each one is reported.
 */
const ANY_ADDRESS_TOPICS = [
  T.AddrChanged,
  T.AddressChanged,
  T.TextChanged,
  T.LegacyTextChanged,
  T.ContenthashChanged,
  T.NameChanged,
  T.VersionChanged,
  T.DNSRecordChanged,
  T.DNSRecordDeleted,
  T.ReverseClaimed,
];

/**
 * Ethereum Name Service (NAMESPACE_C): token id = node (namehash of the normalized name).
 *
 * @example ensAdapter.tokenIdOf("eth") // "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae"
 */
export const ensAdapter: ProviderAdapter = {
  protocol: "ENS",
  provider: "NAMESPACE_C",
  networks: ["ETHEREUM"],
  mainnet: ENS_MAINNET,
  tree: ensNameTree,
  filters(contracts) {
    const out: LogFilter[] = [];
    for (const [role, topics] of ROLE_TOPICS) {
      const address = addressesOf(contracts, role);
      if (address.length > 0) out.push({ address, topic0: [...topics] });
    }
    out.push({ address: null, topic0: [...ANY_ADDRESS_TOPICS] });
    return out;
  },
  decode: decodeEnsLog,
  mapRecord: mapEnsRecord,
  tokenIdOf: namehash,
  normalizeName: normalizeEnsName,
};
