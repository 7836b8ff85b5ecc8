import type { DecodeResult, Hex, RawLog } from "../provider.js";
import {
  dynamicString,
  fail,
  hasTopics,
  normalizeTokenName,
  ok,
  recordEvent,
  topicAddress,
  topicId,
  wordNumber,
} from "../log-decode.js";

/**
 * Topic0 of the UNSRegistry events (docs/chain-facts.md). FNS is a UNS fork: it shares every topic
 * below except the record event, `SetRecord` instead of `Set`, and has no SetExpiry.
 */
export const UNS_TOPICS = {
  /** Transfer(address indexed from, address indexed to, uint256 indexed tokenId) */
  Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  /** NewURI(uint256 indexed tokenId, string uri) */
  NewURI: "0xc5beef08f693b11c316c0c8394a377a0033c9cf701b8cd8afd79cecef60c3952",
  /** Set(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value) */
  Set: "0x851ffe8e74d5015261dba0a1f9e1b0e5d42c5af5d2ad1908fee897c7d80a0d92",
  /** NewKey(uint256 indexed tokenId, string indexed keyIndex, string key) */
  NewKey: "0x7ae4f661958fbecc2f77be6b0eb280d2a6f604b29e1e7221c82b9da0c4af7f86",
  /** ResetRecords(uint256 indexed tokenId) */
  ResetRecords: "0x185c30856dadb58bf097c1f665a52ada7029752dbcad008ea3fefc73bee8c9fe",
  /** SetReverse(address indexed addr, uint256 indexed tokenId) */
  SetReverse: "0xeb76a21470988c474a21f690cc28fee1ed511bd812dc3c21fd0f49c5e5d4708a",
  /** RemoveReverse(address indexed addr) */
  RemoveReverse: "0xfcf5eec0cfa3e6332f5f0e63ec242d71f866a61d121d6cdf5c2eb3b668a26c4f",
  /** SetExpiry(uint256 indexed tokenId, uint64 expiry) */
  SetExpiry: "0x93feabb03ab84f47fc85bf0c298103fca21d8c8bc376eae0c1e1c56b9d4f7789",
} as const satisfies Record<string, Hex>;

/** The parent of a top-level token. */
export const ROOT_TOKEN: Hex = `0x${"0".repeat(64)}`;

/** FNS SetRecord(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value) */
export const FNS_SET_RECORD: Hex = "0x0a7ae1cb64eb8d41af8aaee78f12a607071ab429d4cb7c764b43cb10e4b3e373";

export interface UnsFamilyOptions {
  /** Topic0 of the record event: UNS `Set`, FNS `SetRecord`. */
  recordTopic: Hex;
  /** Whether SetExpiry is decoded (UNS only). */
  expiry: boolean;
  /**
   * A single-label name (a TLD token, UNS `mintTLD`) gets the root as its parent, so the
   * adapter's tree rules can tell it from a name (UNS only).
   */
  tldParent?: boolean;
  /** The token id of a published name, in each form the registry may have hashed (all must denote one name). */
  tokenIdsOf(raw: string, normalized: { name: string; ascii: string }): Hex[];
}

/**
 * Decodes one log of a UNS-family registry. The caller has checked that the log comes from the
 * registry. NewKey only announces a key name, which Set/SetRecord repeats: it is a no-op.
 */
export function decodeUnsFamily(log: RawLog, opts: UnsFamilyOptions): DecodeResult {
  const topic0 = log.topics[0]?.toLowerCase();
  switch (topic0) {
    case UNS_TOPICS.Transfer: {
      // ERC-20 Transfer shares this topic0 with 3 topics: only the ERC-721 form (4) is ours.
      if (!hasTopics(log, 4)) return fail("Transfer without an indexed token id");
      const from = topicAddress(log.topics[1]);
      const to = topicAddress(log.topics[2]);
      const tokenId = topicId(log.topics[3]);
      if (from === null || to === null || tokenId === null) return fail("malformed Transfer topics");
      return ok({ type: "transfer", tokenId, from, to });
    }
    case UNS_TOPICS.NewURI: {
      const tokenId = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      if (tokenId === null) return fail("malformed NewURI topics");
      const uri = dynamicString(log.data, 0);
      if (uri === null) return fail("malformed NewURI data");
      if (uri.length > 1024) return fail("NewURI name longer than 1024 characters");
      const name = normalizeTokenName(uri);
      if (!name.ok) return fail(`NewURI name fails normalization: ${name.reason}`);
      if (!opts.tokenIdsOf(uri, name).includes(tokenId)) {
        return fail(`NewURI name "${name.name.slice(0, 64)}" does not hash to token ${tokenId}`);
      }
      if (opts.tldParent && !name.name.includes(".")) {
        return ok({ type: "name", tokenId, name: name.name, parentTokenId: ROOT_TOKEN });
      }
      return ok({ type: "name", tokenId, name: name.name });
    }
    case opts.recordTopic: {
      const tokenId = hasTopics(log, 4) ? topicId(log.topics[1]) : null;
      if (tokenId === null) return fail("malformed record event topics");
      const key = dynamicString(log.data, 0);
      const value = dynamicString(log.data, 1);
      if (key === null || value === null) return fail("malformed record event data");
      return recordEvent(tokenId, key, value);
    }
    case UNS_TOPICS.NewKey:
      return ok();
    case UNS_TOPICS.ResetRecords: {
      const tokenId = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      if (tokenId === null) return fail("malformed ResetRecords topics");
      return ok({ type: "records-reset", tokenId });
    }
    case UNS_TOPICS.SetReverse: {
      const address = hasTopics(log, 3) ? topicAddress(log.topics[1]) : null;
      const tokenId = topicId(log.topics[2]);
      if (address === null || tokenId === null) return fail("malformed SetReverse topics");
      return ok({ type: "reverse-set", address, tokenId });
    }
    case UNS_TOPICS.RemoveReverse: {
      const address = hasTopics(log, 2) ? topicAddress(log.topics[1]) : null;
      if (address === null) return fail("malformed RemoveReverse topics");
      return ok({ type: "reverse-removed", address });
    }
    case UNS_TOPICS.SetExpiry: {
      if (!opts.expiry) break;
      const tokenId = hasTopics(log, 2) ? topicId(log.topics[1]) : null;
      const expiresAt = wordNumber(log.data, 0);
      if (tokenId === null || expiresAt === null) return fail("malformed SetExpiry");
      return ok({ type: "expiry", tokenId, expiresAt });
    }
  }
  return fail(`unknown event topic ${topic0 ?? "(none)"}`);
}
