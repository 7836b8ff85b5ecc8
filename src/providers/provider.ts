import type { NameResult } from "../domain/names.js";
import type { Network } from "../domain/networks.js";
import type { Protocol, Provider } from "../domain/providers.js";

export type Hex = `0x${string}`;

/**
 * What one log means for the map, independent of the protocol that emitted it. Token ids are
 * 0x-prefixed 64-hex lower case; addresses lower case; `expiresAt` in epoch seconds.
 *
 * @example { type: "transfer", tokenId: "0x…", from: "0x0000…", to: "0xabc…" } // a mint
 */
export type DomainEvent =
  /**
   * The plaintext name of a token became known (UNS/FNS NewURI, ENS NameRegistered / NameWrapped),
   * normalized and checked against the token id. A single label is a top-level token (UNS/FNS TLD).
   */
  | { type: "name"; tokenId: Hex; name: string; parentTokenId?: Hex }
  /** Ownership changed; `from` zero = mint, `to` zero = burn. */
  | { type: "transfer"; tokenId: Hex; from: string; to: string }
  /** A native record was set; an empty value deletes it. */
  | { type: "record"; tokenId: Hex; nativeKey: string; nativeValue: string }
  /** Every record of the token is wiped (UNS/FNS ResetRecords, ENS VersionChanged). */
  | { type: "records-reset"; tokenId: Hex }
  /** `address` names `tokenId` as its primary (reverse) name. */
  | { type: "reverse-set"; address: string; tokenId: Hex }
  /** ENS-style reverse: `address` names a name string (resolved to a token by namehash). */
  | { type: "reverse-name"; address: string; name: string }
  | { type: "reverse-removed"; address: string }
  | { type: "expiry"; tokenId: Hex; expiresAt: number }
  /** ENS registry: the resolver of a node changed. */
  | { type: "resolver"; tokenId: Hex; resolver: string }
  /**
   * ENS registry: `tokenId` is the child of `parentTokenId` by `labelHash` (NewOwner). Its name is
   * `<label>.<parent name>`, the label reading `[<labelHash hex>]` until a `name` event gives it.
   */
  | { type: "subnode"; tokenId: Hex; parentTokenId: Hex; labelHash: Hex }
  /**
   * ENS registry owner (the "manager") of a node. It is the owner unless the domain is a `.eth`
   * second-level name (`<label>.eth`), whose owner is the BaseRegistrar NFT holder: the crawler
   * skips it for those. Owner zero releases the node. Changes to the NameWrapper are not emitted
   * (the wrapper's ERC-1155 transfer names the real owner).
   */
  | { type: "registry-owner"; tokenId: Hex; owner: string }
  /** ENS ReverseClaimed, checked: `tokenId` is the reverse node of `address` (`<addr>.addr.reverse`). */
  | { type: "reverse-node"; tokenId: Hex; address: string }
  /**
   * ENS resolver NameChanged: the name() record of node `tokenId`. When `tokenId` is a reverse node
   * (a `reverse-node` event names its address) this is that address's primary name; "" clears it.
   */
  | { type: "node-name"; tokenId: Hex; name: string };

/** The position of a log on its chain. */
export interface LogPosition {
  chainId: number;
  blockNumber: number;
  blockHash: Hex;
  logIndex: number;
  transactionHash: Hex;
  /** Lower-case address of the emitting contract. */
  address: string;
}

export interface RawLog extends LogPosition {
  topics: Hex[];
  data: Hex;
}

export type DecodeResult =
  | { ok: true; events: DomainEvent[] }
  /** Unknown topic, malformed data, or a failed check (token id mismatch): skipped and reported. */
  | { ok: false; reason: string };

/** The contracts of one protocol on one network, as deployed (mainnet defaults or devnet.json). */
export interface SourceContracts {
  /** Contract role → lower-case address, e.g. { registry: "0x…" } or ENS's registry, baseRegistrar, … */
  addresses: Record<string, string>;
  startBlock: number;
}

export interface LogFilter {
  /** `null` = any address (ENS resolver events: custom resolvers are common). */
  address: string[] | null;
  topic0: Hex[];
}

/** A token as the name-tree rules see it: its id and, when events named one, its parent. */
export interface TreeToken {
  tokenId: string;
  parentTokenId: string | null;
}

/**
 * What a protocol's name tree adds to the crawler's projection of events (crawler/projection.ts).
 * Every rule is optional: without one, the projection treats the protocol as one flat registry of
 * NFTs whose holder owns the name (UNS, FNS).
 *
 * @example
 * ensAdapter.tree?.ownedByNftHolder?.({ tokenId, parentTokenId: ETH_NODE }) // true: `<label>.eth`
 */
export interface NameTreeRules {
  /**
   * True when the token's NFT holder owns it; otherwise the latest of NFT holder and registry
   * owner (`registry-owner` events) does.
   */
  ownedByNftHolder?(token: TreeToken): boolean;
  /** False for tokens that are the protocol's bookkeeping, not names (ENS's reverse tree). */
  isNameToken?(token: TreeToken): boolean;
  /** The plaintext of a label hash that no event ever names (labels every deployment uses), or null. */
  knownLabel?(labelHash: string): string | null;
  /**
   * The token whose `node-name` record is an address's primary name (ENS's reverse node): its
   * events are read with the address's reverse claims, and its name wins over them.
   */
  reverseNodeOf?(address: string): Hex;
}

/**
 * The adapter port: one per protocol, pure, no I/O. A protocol is one folder under `providers/`
 * with its adapter, registered by one line in `adapters.ts`; the crawler has no protocol branches.
 *
 * @example
 * const events = fnsAdapter.decode(log, contracts); // { ok: true, events: [{ type: "record", … }] }
 */
export interface ProviderAdapter {
  readonly protocol: Protocol;
  readonly provider: Provider;
  readonly networks: readonly Network[];
  /** The mainnet deployments (docs/chain-facts.md); a `startBlock` of 0 means "find it". */
  readonly mainnet: Partial<Record<Network, SourceContracts>>;
  /** Rules of the protocol's name tree for the projection; absent = one flat NFT registry. */
  readonly tree?: NameTreeRules;
  /** The getLogs filters that cover every event the adapter decodes. */
  filters(contracts: SourceContracts): LogFilter[];
  decode(log: RawLog, contracts: SourceContracts): DecodeResult;
  /** Maps a native record onto canonical key(s) (docs/records.md); an unmapped key is kept as is. */
  mapRecord(nativeKey: string, nativeValue: string): Array<{ key: string; value: string }>;
  /** The token id of a normalized full name. */
  tokenIdOf(name: string): Hex;
  /** Normalizes a full name under the protocol's rules (ENSIP-15 for ENS, UTS-46 for the others). */
  normalizeName(name: string): NameResult;
}
