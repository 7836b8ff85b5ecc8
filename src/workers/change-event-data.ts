import type { ChangeEvent, ChangePayload } from "../domain/change-events.js";

/** The channel's topic of an append to the change log by anything but the crawler (winner.changed). */
export const CHANGES_TOPIC = "changes";

/**
 * A payload as sent: without `prior` (the ranker's inputs, kept for winner.changed only) and
 * `announced` (the deriver's mark of an SNS announcement).
 */
function shownPayload(p: ChangePayload): Omit<ChangePayload, "prior" | "announced"> {
  const { prior: _prior, announced: _announced, retracted, ...rest } = p;
  return retracted
    ? { ...rest, retracted: { type: retracted.type, payload: shownPayload(retracted.payload) } }
    : rest;
}

/** A change of a project's settings happened in no block: `block` and `transactionHash` are null. */
const bySettings = (e: ChangeEvent) => (e.payload.cause ?? e.payload.retracted?.payload.cause) === "settings";

/** An event as the feed's `data` and a webhook's body show it (docs/api.md). */
export function eventData(e: ChangeEvent): Record<string, unknown> {
  return {
    id: e.id,
    type: e.type,
    time: new Date(e.createdAt).toISOString(),
    network: e.network,
    provider: e.provider,
    tokenId: e.tokenId,
    domain: e.name,
    tld: e.tld,
    block: bySettings(e)
      ? null
      : {
          number: e.blockNumber,
          hash: e.blockHash,
          time: e.blockTime === null ? null : new Date(e.blockTime).toISOString(),
        },
    transactionHash: e.txHash,
    ...(e.retracts === null ? {} : { retracts: e.retracts }),
    ...shownPayload(e.payload),
  };
}
