import type { Hex } from "../provider.js";

/** Topic0 of every ENS event the adapter decodes, with its exact signature (docs/chain-facts.md). */
export const ENS_TOPICS = {
  // Registry (ENSRegistryWithFallback)
  /** NewOwner(bytes32 indexed node, bytes32 indexed label, address owner) */
  NewOwner: "0xce0457fe73731f824cc272376169235128c118b49d344817417c6d108d155e82",
  /** Transfer(bytes32 indexed node, address owner) */
  RegistryTransfer: "0xd4735d920b0f87494915f556dd9b54c8f309026070caea5c737245152564d266",
  /** NewResolver(bytes32 indexed node, address resolver) */
  NewResolver: "0x335721b01866dc23fbee8b6b2c7b1e14d6f05c28cd35a2c934239f94095602a0",

  // BaseRegistrarImplementation (.eth ERC-721, id = labelhash)
  /** NameRegistered(uint256 indexed id, address indexed owner, uint256 expires) */
  BaseNameRegistered: "0xb3d987963d01b2f68493b4bdb130988f157ea43070d4ad840fee0466ed9370d9",
  /** NameRenewed(uint256 indexed id, uint256 expires) */
  BaseNameRenewed: "0x9b87a00e30f1ac65d898f070f8a3488fe60517182d0a2098e1b4b93a54aa9bd6",
  /** NameMigrated(uint256 indexed id, address indexed owner, uint256 expires) */
  NameMigrated: "0xea3d7e1195a15d2ddcd859b01abd4c6b960fa9f9264e499a70a90c7f0c64b717",
  /** Transfer(address indexed from, address indexed to, uint256 indexed tokenId) (ERC-721) */
  Erc721Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",

  // Registrar controllers
  /** NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 cost, uint256 expires) */
  LegacyNameRegistered: "0xca6abbe9d7f11422cb6ca7629fbf6fe9efb1c621f71ce8f02b9f2a230097404f",
  /** NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 baseCost, uint256 premium, uint256 expires) */
  WrappedNameRegistered: "0x69e37f151eb98a09618ddaa80c8cfaf1ce5996867c489f45b555b412271ebf27",
  /** NameRegistered(string label, bytes32 indexed labelhash, address indexed owner, uint256 baseCost, uint256 premium, uint256 expires, bytes32 referrer) */
  UnwrappedNameRegistered: "0xc2240194853531f1ae318dcef227de79c6ad0fd9d1b0e4fe08568415be2e08a5",
  /** NameRenewed(string name, bytes32 indexed label, uint256 cost, uint256 expires) */
  ControllerNameRenewed: "0x3da24c024582931cfaf8267d8ed24d13a82a8068d5bd337d30ec45cea4e506ae",
  /** NameRenewed(string label, bytes32 indexed labelhash, uint256 cost, uint256 expires, bytes32 referrer) */
  UnwrappedNameRenewed: "0xfa956c3bce4cb4b01166868ecaf0620566bc7e33fc70b0b9c6aef61e37e50b94",

  // NameWrapper
  /** NameWrapped(bytes32 indexed node, bytes name, address owner, uint32 fuses, uint64 expiry) */
  NameWrapped: "0x8ce7013e8abebc55c3890a68f5a27c67c3f7efa64e584de5fb22363c606fd340",
  /** NameUnwrapped(bytes32 indexed node, address owner) */
  NameUnwrapped: "0xee2ba1195c65bcf218a83d874335c6bf9d9067b4c672f3c3bf16cf40de7586c4",
  /** FusesSet(bytes32 indexed node, uint32 fuses): the node's whole fuse set after the change */
  FusesSet: "0x39873f00c80f4f94b7bd1594aebcf650f003545b74824d57ddf4939e3ff3a34b",
  /** ExpiryExtended(bytes32 indexed node, uint64 expiry) */
  ExpiryExtended: "0xf675815a0817338f93a7da433f6bd5f5542f1029b11b455191ac96c7f6a9b132",
  /** TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value) */
  TransferSingle: "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
  /** TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values) (ERC-1155, standard) */
  TransferBatch: "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",

  // Reverse registrars
  /** ReverseClaimed(address indexed addr, bytes32 indexed node) */
  ReverseClaimed: "0x6ada868dd3058cf77a48a74489fd7963688e5464b2b0fa957ace976243270e92",
  /** NameForAddrChanged(address indexed addr, string name) */
  NameForAddrChanged: "0x8af7a4c7007a33f680904f3b64733396b730fef22d79555dee29801ca2e479a9",

  // Resolvers (any address)
  /** AddrChanged(bytes32 indexed node, address a) */
  AddrChanged: "0x52d7d861f09ab3d26239d492e8968629f95e9e318cf0b73bfddc441522a15fd2",
  /** AddressChanged(bytes32 indexed node, uint256 coinType, bytes newAddress) */
  AddressChanged: "0x65412581168e88a1e60c6459d7f44ae83ad0832e670826c05a4e2476b57af752",
  /** TextChanged(bytes32 indexed node, string indexed indexedKey, string key, string value) */
  TextChanged: "0x448bc014f1536726cf8d54ff3d6481ed3cbc683c2591ca204274009afa09b1a1",
  /** TextChanged(bytes32 indexed node, string indexed indexedKey, string key) (legacy, no value) */
  LegacyTextChanged: "0xd8c9334b1a9c2f9da342a0a2b32629c1a229b6445dad78947f674b44444a7550",
  /** ContenthashChanged(bytes32 indexed node, bytes hash) */
  ContenthashChanged: "0xe379c1624ed7e714cc0937528a32359d69d5281337765313dba4e081b72d7578",
  /** NameChanged(bytes32 indexed node, string name) */
  NameChanged: "0xb7d29e911041e8d9b843369e890bcb72c9388692ba48b65ac54e7214c4c348f7",
  /** VersionChanged(bytes32 indexed node, uint64 newVersion) */
  VersionChanged: "0xc6621ccb8f3f5a04bb6502154b2caf6adf5983fe76dfef1cfc9c42e3579db444",
  /** DNSRecordChanged(bytes32 indexed node, bytes name, uint16 resource, bytes record) */
  DNSRecordChanged: "0x52a608b3303a48862d07a73d82fa221318c0027fbbcfb1b2329bface3f19ff2b",
  /** DNSRecordDeleted(bytes32 indexed node, bytes name, uint16 resource) */
  DNSRecordDeleted: "0x03528ed0c2a3ebc993b12ce3c16bb382f9c7d88ef7d8a1bf290eaf35955a1207",
} as const satisfies Record<string, Hex>;

/** The signature of each topic, for tests and docs: they must hash to the topic. */
export const ENS_SIGNATURES: Record<keyof typeof ENS_TOPICS, string> = {
  NewOwner: "event NewOwner(bytes32 indexed node, bytes32 indexed label, address owner)",
  RegistryTransfer: "event Transfer(bytes32 indexed node, address owner)",
  NewResolver: "event NewResolver(bytes32 indexed node, address resolver)",
  BaseNameRegistered: "event NameRegistered(uint256 indexed id, address indexed owner, uint256 expires)",
  BaseNameRenewed: "event NameRenewed(uint256 indexed id, uint256 expires)",
  NameMigrated: "event NameMigrated(uint256 indexed id, address indexed owner, uint256 expires)",
  Erc721Transfer: "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  LegacyNameRegistered:
    "event NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 cost, uint256 expires)",
  WrappedNameRegistered:
    "event NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 baseCost, uint256 premium, uint256 expires)",
  UnwrappedNameRegistered:
    "event NameRegistered(string label, bytes32 indexed labelhash, address indexed owner, uint256 baseCost, uint256 premium, uint256 expires, bytes32 referrer)",
  ControllerNameRenewed:
    "event NameRenewed(string name, bytes32 indexed label, uint256 cost, uint256 expires)",
  UnwrappedNameRenewed:
    "event NameRenewed(string label, bytes32 indexed labelhash, uint256 cost, uint256 expires, bytes32 referrer)",
  NameWrapped:
    "event NameWrapped(bytes32 indexed node, bytes name, address owner, uint32 fuses, uint64 expiry)",
  NameUnwrapped: "event NameUnwrapped(bytes32 indexed node, address owner)",
  FusesSet: "event FusesSet(bytes32 indexed node, uint32 fuses)",
  ExpiryExtended: "event ExpiryExtended(bytes32 indexed node, uint64 expiry)",
  TransferSingle:
    "event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)",
  TransferBatch:
    "event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)",
  ReverseClaimed: "event ReverseClaimed(address indexed addr, bytes32 indexed node)",
  NameForAddrChanged: "event NameForAddrChanged(address indexed addr, string name)",
  AddrChanged: "event AddrChanged(bytes32 indexed node, address a)",
  AddressChanged: "event AddressChanged(bytes32 indexed node, uint256 coinType, bytes newAddress)",
  TextChanged: "event TextChanged(bytes32 indexed node, string indexed indexedKey, string key, string value)",
  LegacyTextChanged: "event TextChanged(bytes32 indexed node, string indexed indexedKey, string key)",
  ContenthashChanged: "event ContenthashChanged(bytes32 indexed node, bytes hash)",
  NameChanged: "event NameChanged(bytes32 indexed node, string name)",
  VersionChanged: "event VersionChanged(bytes32 indexed node, uint64 newVersion)",
  DNSRecordChanged: "event DNSRecordChanged(bytes32 indexed node, bytes name, uint16 resource, bytes record)",
  DNSRecordDeleted: "event DNSRecordDeleted(bytes32 indexed node, bytes name, uint16 resource)",
};
