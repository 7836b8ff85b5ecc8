import type { Store } from "./store.js";

/**
 * Runs `write` in one transaction that also publishes `topics` on the store's change feed (if it
 * has one): on PostgreSQL a NOTIFY inside the transaction, so the other processes hear of the
 * change exactly when it commits, and never of a write that rolled back. The caller drops its own
 * process's caches after this returns.
 *
 * @example await writeAndPublish(store, [`key:${id}`], (tx) => tx.revokeApiKey(id, now));
 */
export function writeAndPublish<T>(
  store: Pick<Store, "transaction">,
  topics: readonly string[],
  write: (tx: Store) => Promise<T>,
): Promise<T> {
  return store.transaction(async (tx) => {
    const result = await write(tx);
    for (const topic of topics) await tx.changes?.publish(topic);
    return result;
  });
}
