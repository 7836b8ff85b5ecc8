import type { Network } from "./networks.js";
import type { Provider } from "./providers.js";
import type { ChangeType } from "@omniname/wire/change-types";

// The event types are defined once in packages/wire (@omniname/wire), which the console imports too.
export { CHANGE_TYPES, type ChangeType, isChangeType } from "@omniname/wire/change-types";

/** A record as the feed shows it: canonical key and value (docs/records.md). */
export interface ChangedRecord {
  key: string;
  value: string;
}

/**
 * What an event says beyond its position. Every field is optional: each type fills its own
 * (`owner`, `records` for `domain.updated`; `state` for created and the state after an update;
 * `winner` for `winner.changed`).
 */
export interface ChangePayload {
  /** The domain as it stands after the change (absent for `domain.removed` and retractions). */
  state?: { owner: string; expiresAt: number | null; records: ChangedRecord[] };
  /** The owner before a removal, or `from → to` of an update that changed it. */
  owner?: { from: string | null; to: string | null };
  records?: {
    added: ChangedRecord[];
    removed: ChangedRecord[];
    changed: Array<{ key: string; from: string; to: string }>;
  };
  expiresAt?: { from: number | null; to: number | null };
  nameChanged?: { from: string; to: string };
  /** `change.retracted`: the event undone, as it was sent. */
  retracted?: { type: ChangeType; payload: ChangePayload };
  /** `winner.changed`: the winning domain before and after, as network/provider/token (null: none). */
  winner?: { from: WinnerRef | null; to: WinnerRef | null };
  /** `winner.changed`: what changed the winner, the map (a block) or the project's settings. */
  cause?: "map" | "settings";
  /**
   * Not sent: the domain's ranking inputs before a removal or an update, so that the winner of a
   * colliding name before the change can be ranked again (scoring/winner-events.ts).
   */
  prior?: RankPrior;
  /**
   * Not sent: the SNS source announced this event at `confirmed`, before the map reached it
   * (docs/sns.md, "Change feed at confirmed"). The winner deriver, which ranks the map, leaves it
   * alone; the settlement that finds the map at the announced state derives its winner.changed.
   */
  announced?: true;
}

/** The fields of a domain the ranker reads beyond its name, network and provider. */
export interface RankPrior {
  baseScore: number;
  registeredAt: number | null;
  expiresAt: number | null;
  csamOk: boolean;
}

export interface WinnerRef {
  network: Network;
  provider: Provider;
  tokenId: string;
}

/** One change of the map, as the crawler writes it (change-log.port.ts). */
export interface ChangeEventWrite {
  type: ChangeType;
  /** Epoch ms of the write (the retention window counts from it). */
  createdAt: number;
  sourceId: string;
  network: Network;
  provider: Provider;
  tokenId: string;
  name: string;
  tld: string;
  blockNumber: number;
  blockHash: string;
  /** The transaction of the domain's last change in the block range; null for corrections after a reorg. */
  txHash: string | null;
  /** Epoch ms of that block, when known. */
  blockTime: number | null;
  /** `change.retracted`: the id of the event the reorg undid. */
  retracts: number | null;
  /** Set when the event concerns one project only (null: every project's stream). */
  projectId: number | null;
  payload: ChangePayload;
}

/** A stored event: its `id` is the feed's cursor, increasing in commit order. */
export interface ChangeEvent extends ChangeEventWrite {
  id: number;
}
