import type { ChangeEvent, ChangeEventWrite } from "../domain/change-events.js";

/** The log's ends: cursors at or above `prunedThrough` and at or below `newest` are valid. */
export interface ChangeLogBounds {
  /** The highest id pruned (0 when nothing was). A cursor below it has expired. */
  prunedThrough: number;
  /** The highest id written (or pruned); a cursor above it comes from the future. */
  newest: number;
}

/**
 * The change log: every change of the map, in the order it was committed, kept for a retention
 * window. The crawler appends in the transaction of the change it describes; the change feed (SSE)
 * and webhook deliveries read it by cursor. Ids increase in commit order on both backends (on
 * PostgreSQL the append takes a transaction-scoped advisory lock, so a reader that has seen id N
 * will never see a smaller id commit later).
 *
 * @example
 * await tx.appendChangeEvents([{ type: "domain.created", createdAt: now, sourceId, network, provider,
 *   tokenId, name, tld, blockNumber, blockHash, txHash, blockTime, retracts: null, projectId: null,
 *   payload: { state } }]);
 * const page = await store.changeLog.findChangeEventsAfter(cursor, 500);
 */
export interface ChangeLog {
  /** Appends events in order; each gets the next id. */
  appendChangeEvents(events: ChangeEventWrite[]): Promise<void>;
  /** Events with an id above `after`, ascending, at most `limit`. */
  findChangeEventsAfter(after: number, limit: number): Promise<ChangeEvent[]>;
  /**
   * A source's events above `blockNumber` that a reorg would undo: not retractions themselves and
   * not retracted already. Ascending.
   */
  findRetractableChangeEvents(sourceId: string, blockNumber: number): Promise<ChangeEvent[]>;
  changeLogBounds(): Promise<ChangeLogBounds>;
  /** Deletes events written before `before` (epoch ms), at most `limit` of them; returns how many. */
  pruneChangeEvents(before: number, limit: number): Promise<number>;
}
