import { normalizeEnsName } from "../../domain/names.js";
import {
  dynamicHex,
  dynamicString,
  fail,
  hasTopics,
  ok,
  recordEvent,
  topicAddress,
  topicId,
  unsafeText,
  wordAddress,
  wordNumber,
  wordUint,
} from "../log-decode.js";
import { keccak256, namehash, reverseNode } from "../namehash.js";
import type { DecodeResult, Hex, RawLog } from "../provider.js";
import { decodeWireNameHex, dnsTypeName } from "./dns-wire.js";
import { ENS_TOPICS } from "./ens-topics.js";

/**
 * Resolver events, decoded from ANY address: custom resolvers are common, so the getLogs filter
 * has `address: null`. Because anyone can emit these topics, the crawler must apply a resolver
 * event only when `log.address` is the node's current resolver (the latest `resolver` event).
 * Native keys follow ens-records.ts: `addr.<coinType>`, `text.<key>`, `contenthash`, `dns.<TYPE>`.
 */

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
const ZERO_20 = "0".repeat(40);

/** ETH (60) and ENSIP-11 EVM chains (0x80000000 | chainId) hold 20-byte addresses; all zero = unset. */
function isEvmCoin(coinType: bigint): boolean {
  return coinType === 60n || (coinType >= 0x80000000n && coinType <= 0xffffffffn);
}

// Text keys recur (url, avatar, com.twitter …): their topic hashes are memoized, bounded.
const keyTopics = new Map<string, Hex>();
function keyTopic(key: string): Hex {
  let topic = keyTopics.get(key);
  if (topic === undefined) {
    topic = keccak256(key);
    if (keyTopics.size >= 4096) keyTopics.clear();
    if (key.length <= 128) keyTopics.set(key, topic);
  }
  return topic;
}

function nodeOf(log: RawLog, topics: number): Hex | null {
  return hasTopics(log, topics) ? topicId(log.topics[1]) : null;
}

function decodeDnsRecord(log: RawLog, node: Hex, deleted: boolean): DecodeResult {
  const nameHex = dynamicHex(log.data, 0);
  const resource = wordNumber(log.data, 1);
  const recordHex = deleted ? "" : dynamicHex(log.data, 2);
  if (nameHex === null || resource === null || resource > 0xffff || recordHex === null) {
    return fail("malformed DNS record event data");
  }
  const labels = decodeWireNameHex(nameHex);
  if (labels === null || labels.length === 0) return fail("DNS owner name is not a valid wire-format name");
  const owner = labels.join(".").toLowerCase();
  const type = dnsTypeName(resource);
  // Only the domain's own RRsets map to record.<TYPE>.n; names below it stay native and unmapped.
  // The check is exact because the owner name must hash to the node itself.
  const key = namehash(owner) === node ? `dns.${type}` : `dns.${owner}.${type}`;
  return recordEvent(node, key, recordHex === "" ? "" : `0x${recordHex}`);
}

/** Decodes a resolver event, or returns null when the topic is not one. */
export function decodeResolverEvent(log: RawLog, topic0: string): DecodeResult | null {
  switch (topic0) {
    case ENS_TOPICS.AddrChanged: {
      const node = nodeOf(log, 2);
      const a = wordAddress(log.data, 0);
      if (node === null || a === null) return fail("malformed AddrChanged");
      return recordEvent(node, "addr.60", a === ZERO_ADDRESS ? "" : a);
    }
    case ENS_TOPICS.AddressChanged: {
      const node = nodeOf(log, 2);
      const coinType = wordUint(log.data, 0);
      const bytes = dynamicHex(log.data, 1);
      if (node === null || coinType === null || bytes === null) return fail("malformed AddressChanged");
      const unset = bytes === "" || (isEvmCoin(coinType) && bytes === ZERO_20);
      return recordEvent(node, `addr.${coinType}`, unset ? "" : `0x${bytes.toLowerCase()}`);
    }
    case ENS_TOPICS.TextChanged: {
      const node = nodeOf(log, 3);
      const key = dynamicString(log.data, 0);
      const value = dynamicString(log.data, 1);
      if (node === null || key === null || value === null) return fail("malformed TextChanged");
      // The indexed key topic is keccak256(key): a mismatch means a forged or corrupt log.
      if (log.topics[2]?.toLowerCase() !== keyTopic(key))
        return fail("TextChanged key does not match its topic");
      return recordEvent(node, `text.${key}`, value);
    }
    case ENS_TOPICS.LegacyTextChanged: {
      // Old resolvers emit the key only; recording it with an empty value would delete it, which is
      // wrong. The value needs an eth_call (text(node, key)), which a pure adapter cannot make.
      const key = dynamicString(log.data, 0);
      return fail(`legacy TextChanged carries no value (key ${JSON.stringify((key ?? "?").slice(0, 64))})`);
    }
    case ENS_TOPICS.ContenthashChanged: {
      const node = nodeOf(log, 2);
      const hash = dynamicHex(log.data, 0);
      if (node === null || hash === null) return fail("malformed ContenthashChanged");
      return recordEvent(node, "contenthash", hash === "" ? "" : `0x${hash.toLowerCase()}`);
    }
    case ENS_TOPICS.DNSRecordChanged:
    case ENS_TOPICS.DNSRecordDeleted: {
      const node = nodeOf(log, 2);
      if (node === null) return fail("malformed DNS record event topics");
      return decodeDnsRecord(log, node, topic0 === ENS_TOPICS.DNSRecordDeleted);
    }
    case ENS_TOPICS.VersionChanged: {
      const node = nodeOf(log, 2);
      if (node === null) return fail("malformed VersionChanged");
      return ok({ type: "records-reset", tokenId: node });
    }
    case ENS_TOPICS.NameChanged: {
      const node = nodeOf(log, 2);
      const name = dynamicString(log.data, 0);
      if (node === null || name === null) return fail("malformed NameChanged");
      if (name === "") return ok({ type: "node-name", tokenId: node, name });
      const bad = unsafeText("name", name, 1024);
      if (bad !== null) return fail(bad);
      const n = normalizeEnsName(name);
      if (!n.ok) return fail(`NameChanged name fails ENSIP-15 normalization: ${n.reason}`);
      // A primary name that is not already normalized is not a valid primary name (ENSIP-19).
      if (n.value.name !== name)
        return fail(`NameChanged name is not normalized ("${n.value.name.slice(0, 64)}")`);
      return ok({ type: "node-name", tokenId: node, name });
    }
    case ENS_TOPICS.ReverseClaimed: {
      const address = hasTopics(log, 3) ? topicAddress(log.topics[1]) : null;
      const node = topicId(log.topics[2]);
      if (address === null || node === null) return fail("malformed ReverseClaimed");
      // Checked, not trusted: the node must be <addr>.addr.reverse, so any contract may emit it.
      if (reverseNode(address) !== node)
        return fail(`ReverseClaimed node is not the reverse node of ${address}`);
      return ok({ type: "reverse-node", tokenId: node, address });
    }
  }
  return null;
}
