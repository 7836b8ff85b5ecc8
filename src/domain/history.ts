import type { Network } from "./networks.js";

/**
 * A point in the past to answer from (time travel): a time, or a block of one network. `time` is
 * epoch milliseconds.
 *
 * @example { kind: "block", network: "POLYGON", block: 51_234_567 }
 */
export type AtPoint = { kind: "time"; time: number } | { kind: "block"; network: Network; block: number };

/** The chain event that set a value (provenance): where it is on its chain. */
export interface EventOrigin {
  chainId: number;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  logIndex: number;
  /** ISO 8601 UTC time of the block, or null when the index does not know it. */
  blockTime: string | null;
  /** SOLANA only: the slot the state was read at (`blockNumber` repeats it; there is no log). */
  slot?: number;
  /** SOLANA only: the account the state was read from (the name's account, base58). */
  account?: string;
}

/** How far a source's index had got when it answered. */
export interface IndexPosition {
  /** The last block indexed (the checkpoint). */
  block: number;
  blockHash: string;
  /** Blocks between the chain head the crawler last saw and `block`; null when no head is known. */
  lagBlocks: number | null;
  /** 0 at the head; else seconds since the index was last at the head; null when never seen. */
  secondsBehind: number | null;
}

/**
 * Where the records of an ENS name answered live come from (docs/ens-offchain.md): its resolver,
 * called at `block`, and the gateways that answered it (CCIP-Read), reused for `cacheTtlMs`.
 */
export interface LiveOrigin {
  /** `offchain`: the name's own resolver; `wildcard`: its nearest ancestor's (ENSIP-10). */
  kind: "offchain" | "wildcard";
  resolver: string;
  /** The gateway URL templates that answered; empty when the resolver answered on chain. */
  gateways: string[];
  /** The ETHEREUM block the calls were made at. */
  block: number;
  /** ISO 8601 UTC time of the lookup (earlier than now when the answer came from the cache). */
  fetchedAt: string;
  /** How long the answer is reused (0: never). */
  cacheTtlMs: number;
}

/** Where a domain's owner and records come from, and how fresh its network's index is. */
export interface Provenance {
  owner: EventOrigin | null;
  /** Per record key of the answer: the event that set it (null when the journal does not hold it). */
  records: Record<string, EventOrigin | null>;
  asOf: IndexPosition | null;
  /** Only for an ENS name answered live: where its records came from (they have no event). */
  live?: LiveOrigin;
}

/** The options of a resolution beyond its filter: time travel and provenance. */
export interface HistoryOptions {
  at?: AtPoint | undefined;
  provenance?: boolean | undefined;
}
