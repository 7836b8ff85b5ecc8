import { normalizeEnsName } from "../../domain/names.js";
import {
  addressesOf,
  dynamicHex,
  dynamicString,
  dynamicWords,
  fail,
  hasTopics,
  ok,
  roleOf,
  topicAddress,
  topicId,
  wordAddress,
  wordNumber,
} from "../log-decode.js";
import { ADDR_REVERSE_NODE, childNode, ETH_NODE, keccak256, namehash } from "../namehash.js";
import type { DecodeResult, DomainEvent, Hex, RawLog, SourceContracts } from "../provider.js";
import { decodeWireNameHex } from "./dns-wire.js";
import { decodeResolverEvent } from "./ens-resolver-decode.js";
import { ENS_TOPICS } from "./ens-topics.js";

/**
 * ENS log → domain events. Domain identity is the node (namehash). Ownership follows the ENS
 * manager app: a `.eth` second-level name is owned by its BaseRegistrar NFT holder, or, when
 * wrapped, by its NameWrapper ERC-1155 holder; any other node by its registry owner (emitted as
 * `registry-owner`, which the crawler skips for `.eth` 2LDs). See README.md.
 */

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
/** NameWrapper fuse: once burnt, the wrapped expiry decides ownership of a subname. */
const PARENT_CANNOT_CONTROL = 0x10000;
const MAX_BATCH = 1000;

const wrapperCache = new WeakMap<SourceContracts, Set<string>>();
function wrappersOf(contracts: SourceContracts): Set<string> {
  let set = wrapperCache.get(contracts);
  if (set === undefined) {
    set = new Set(addressesOf(contracts, "nameWrapper"));
    wrapperCache.set(contracts, set);
  }
  return set;
}

/** The plaintext of a .eth label from a controller, checked against its labelhash and ENSIP-15. */
function dotEthName(label: string, labelHash: Hex): DecodeResult {
  if (label.length === 0 || label.length > 512) return fail("controller label is empty or too long");
  if (label.includes(".")) return fail("controller label contains a dot");
  if (keccak256(label) !== labelHash) return fail("controller label does not hash to its labelhash topic");
  const name = `${label}.eth`;
  const n = normalizeEnsName(name);
  if (!n.ok) return fail(`name fails ENSIP-15 normalization: ${n.reason}`);
  // An unnormalized label has its own node, which no normalized lookup reaches: naming that node
  // with the normalized spelling would collide with the real name.
  if (n.value.name !== name) return fail(`name is not ENSIP-15 normalized ("${n.value.name.slice(0, 64)}")`);
  return ok({ type: "name", tokenId: childNode(ETH_NODE, labelHash), name, parentTokenId: ETH_NODE });
}

function decodeRegistry(log: RawLog, topic0: string, contracts: SourceContracts): DecodeResult {
  switch (topic0) {
    case ENS_TOPICS.NewOwner: {
      const node = hasTopics(log, 3) ? topicId(log.topics[1]) : null;
      const label = topicId(log.topics[2]);
      const owner = wordAddress(log.data, 0);
      if (node === null || label === null || owner === null) return fail("malformed NewOwner");
      // Reverse nodes (<addr>.addr.reverse) are not domains: one per address that ever set a
      // primary name. ReverseClaimed carries what the map needs from them.
      if (node === ADDR_REVERSE_NODE) return ok();
      const tokenId = childNode(node, label);
      const events: DomainEvent[] = [{ type: "subnode", tokenId, parentTokenId: node, labelHash: label }];
      // .eth 2LDs are owned through the registrar NFT; names handed to the wrapper through its ERC-1155.
      if (node !== ETH_NODE && !wrappersOf(contracts).has(owner))
        events.push({ type: "registry-owner", tokenId, owner });
      return ok(...events);
    }
    case ENS_TOPICS.RegistryTransfer: {
      const node = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      const owner = wordAddress(log.data, 0);
      if (node === null || owner === null) return fail("malformed registry Transfer");
      if (wrappersOf(contracts).has(owner)) return ok();
      return ok({ type: "registry-owner", tokenId: node, owner });
    }
    case ENS_TOPICS.NewResolver: {
      const node = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      const resolver = wordAddress(log.data, 0);
      if (node === null || resolver === null) return fail("malformed NewResolver");
      return ok({ type: "resolver", tokenId: node, resolver });
    }
  }
  return fail(`unknown registry event topic ${topic0}`);
}

function decodeBaseRegistrar(log: RawLog, topic0: string, contracts: SourceContracts): DecodeResult {
  switch (topic0) {
    case ENS_TOPICS.Erc721Transfer: {
      const from = hasTopics(log, 4) ? topicAddress(log.topics[1]) : null;
      const to = topicAddress(log.topics[2]);
      const id = topicId(log.topics[3]);
      if (from === null || to === null || id === null) return fail("malformed registrar Transfer");
      // The registrar burns only right before re-minting an expired name, and a transfer to the
      // wrapper is followed by the wrapper's mint to the real owner: neither is an ownership fact.
      if (to === ZERO_ADDRESS || wrappersOf(contracts).has(to)) return ok();
      return ok({ type: "transfer", tokenId: childNode(ETH_NODE, id), from, to });
    }
    case ENS_TOPICS.BaseNameRegistered:
    case ENS_TOPICS.NameMigrated: {
      const id = hasTopics(log, 3) ? topicId(log.topics[1]) : null;
      const expiresAt = wordNumber(log.data, 0);
      if (id === null || expiresAt === null) return fail("malformed registrar NameRegistered/NameMigrated");
      const tokenId = childNode(ETH_NODE, id);
      return ok(
        { type: "subnode", tokenId, parentTokenId: ETH_NODE, labelHash: id },
        { type: "expiry", tokenId, expiresAt },
      );
    }
    case ENS_TOPICS.BaseNameRenewed: {
      const id = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      const expiresAt = wordNumber(log.data, 0);
      if (id === null || expiresAt === null) return fail("malformed registrar NameRenewed");
      return ok({ type: "expiry", tokenId: childNode(ETH_NODE, id), expiresAt });
    }
  }
  return fail(`unknown registrar event topic ${topic0}`);
}

function decodeController(log: RawLog, topic0: string): DecodeResult {
  let topics: number;
  switch (topic0) {
    case ENS_TOPICS.LegacyNameRegistered:
    case ENS_TOPICS.WrappedNameRegistered:
    case ENS_TOPICS.UnwrappedNameRegistered:
      topics = 3;
      break;
    case ENS_TOPICS.ControllerNameRenewed:
    case ENS_TOPICS.UnwrappedNameRenewed:
      // Renewals repeat the plaintext: they name labels registered before controllers logged it.
      topics = 2;
      break;
    default:
      return fail(`unknown controller event topic ${topic0}`);
  }
  const labelHash = hasTopics(log, topics) ? topicId(log.topics[1]) : null;
  const label = dynamicString(log.data, 0);
  if (labelHash === null || label === null) return fail("malformed controller event");
  return dotEthName(label, labelHash);
}

function decodeNameWrapped(log: RawLog): DecodeResult {
  const node = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
  const nameHex = dynamicHex(log.data, 0);
  const fuses = wordNumber(log.data, 2);
  const expiry = wordNumber(log.data, 3);
  if (node === null || nameHex === null || fuses === null || expiry === null)
    return fail("malformed NameWrapped");
  const labels = decodeWireNameHex(nameHex);
  if (labels === null || labels.length < 2)
    return fail("NameWrapped name is not a DNS-encoded name of two labels or more");
  if (labels.some((l) => l.includes("."))) return fail("NameWrapped label contains a dot");
  const name = labels.join(".");
  if (namehash(name) !== node) return fail("NameWrapped name does not hash to its node");
  const n = normalizeEnsName(name);
  if (!n.ok) return fail(`NameWrapped name fails ENSIP-15 normalization: ${n.reason}`);
  if (n.value.name !== name)
    return fail(`NameWrapped name is not ENSIP-15 normalized ("${n.value.name.slice(0, 64)}")`);
  const parent = labels.slice(1).join(".");
  const events: DomainEvent[] = [{ type: "name", tokenId: node, name, parentTokenId: namehash(parent) }];
  // A .eth 2LD's wrapped expiry is the registrar's plus the grace period: the registrar's is kept.
  // For a subname it only decides ownership once PARENT_CANNOT_CONTROL is burnt.
  const eth2ld = labels.length === 2 && labels[1] === "eth";
  if (!eth2ld && (fuses & PARENT_CANNOT_CONTROL) !== 0 && expiry > 0) {
    events.push({ type: "expiry", tokenId: node, expiresAt: expiry });
  }
  return ok(...events);
}

function decodeNameWrapper(log: RawLog, topic0: string): DecodeResult {
  switch (topic0) {
    case ENS_TOPICS.NameWrapped:
      return decodeNameWrapped(log);
    case ENS_TOPICS.NameUnwrapped: {
      const node = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      const owner = wordAddress(log.data, 0);
      if (node === null || owner === null) return fail("malformed NameUnwrapped");
      // The registry owner takes over; for a .eth 2LD the registrar Transfer that follows decides.
      return ok({ type: "registry-owner", tokenId: node, owner });
    }
    case ENS_TOPICS.ExpiryExtended: {
      const node = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      const expiry = wordNumber(log.data, 0);
      if (node === null || expiry === null) return fail("malformed ExpiryExtended");
      // Only subnames get it: a wrapped .eth 2LD's renewal sets the wrapper expiry without an event
      // (the registrar's NameRenewed carries it), and extendExpiry / setChildFuses / setSubnode*
      // need the parent's wrapper token, which nobody holds for "eth". The log carries no fuses, so
      // the expiry is kept even when PARENT_CANNOT_CONTROL is not burnt (README.md, "Quirks").
      return ok({ type: "expiry", tokenId: node, expiresAt: expiry });
    }
    case ENS_TOPICS.FusesSet: {
      const node = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      const fuses = wordNumber(log.data, 0);
      if (node === null || fuses === null || fuses > 0xffffffff) return fail("malformed FusesSet");
      // Fuses change nothing we serve: CANNOT_TRANSFER / CANNOT_UNWRAP / CANNOT_SET_RESOLVER… only
      // forbid later changes, whose own events we still read; PARENT_CANNOT_CONTROL only decides
      // whether the expiry is enforced, and any expiry change comes with its own ExpiryExtended.
      return ok();
    }
    case ENS_TOPICS.TransferSingle:
    case ENS_TOPICS.TransferBatch: {
      const from = hasTopics(log, 4) ? topicAddress(log.topics[2]) : null;
      const to = topicAddress(log.topics[3]);
      if (from === null || to === null) return fail("malformed ERC-1155 transfer topics");
      const ids =
        topic0 === ENS_TOPICS.TransferSingle ? singleId(log.data) : dynamicWords(log.data, 0, MAX_BATCH);
      if (ids === null) return fail("malformed ERC-1155 transfer data");
      // A wrapper burn is an unwrap (NameUnwrapped / the registrar Transfer give the new owner).
      if (to === ZERO_ADDRESS) return ok();
      return ok(...ids.map((tokenId): DomainEvent => ({ type: "transfer", tokenId, from, to })));
    }
  }
  return fail(`unknown NameWrapper event topic ${topic0}`);
}

function singleId(data: Hex): Hex[] | null {
  const w = data.length >= 130 ? data.slice(2, 66) : null;
  return w === null ? null : [`0x${w.toLowerCase()}` as Hex];
}

function decodeNameForAddrChanged(log: RawLog): DecodeResult {
  const address = hasTopics(log, 2) ? topicAddress(log.topics[1]) : null;
  const name = dynamicString(log.data, 0);
  if (address === null || name === null) return fail("malformed NameForAddrChanged");
  if (name === "") return ok({ type: "reverse-removed", address });
  if (name.length > 1024) return fail("NameForAddrChanged name longer than 1024 characters");
  const n = normalizeEnsName(name);
  if (!n.ok) return fail(`NameForAddrChanged name fails ENSIP-15 normalization: ${n.reason}`);
  if (n.value.name !== name)
    return fail(`NameForAddrChanged name is not normalized ("${n.value.name.slice(0, 64)}")`);
  return ok({ type: "reverse-name", address, name });
}

/** Decodes one ENS log; contract roles come from `contracts` (see ens.adapter.ts). */
export function decodeEnsLog(log: RawLog, contracts: SourceContracts): DecodeResult {
  const topic0 = log.topics[0]?.toLowerCase();
  if (topic0 === undefined) return fail("log without topics");
  const resolverResult = decodeResolverEvent(log, topic0);
  if (resolverResult !== null) return resolverResult;
  const role = roleOf(contracts, log.address);
  switch (role) {
    case "registry":
      return decodeRegistry(log, topic0, contracts);
    case "baseRegistrar":
      return decodeBaseRegistrar(log, topic0, contracts);
    case "controller":
      return decodeController(log, topic0);
    case "nameWrapper":
      return decodeNameWrapper(log, topic0);
    case "defaultReverseRegistrar":
      if (topic0 === ENS_TOPICS.NameForAddrChanged) return decodeNameForAddrChanged(log);
      break;
  }
  return fail(`unknown event topic ${topic0} from ${role ?? "unexpected contract"} ${log.address}`);
}
