import type { DomainEvent } from "../providers/provider.js";
import { addressOf } from "../providers/sns/sns-program.js";
import { snsEventsOf, type snsStateOf, snsTokenId } from "../providers/sns/sns-state.js";
import type { JournalEntry } from "../store/crawler-log.port.js";
import type { CrawlerSource } from "./crawler-source.js";
import { reverseKey } from "./projection.js";

/**
 * What the SNS source compares from pass to pass: a name's digest (its name, owner and records);
 * the map's own rows give the same digest after a restart (sns-sync.ts, loadLast).
 */
export function snsDigest(name: string, owner: string, records: unknown): string {
  return JSON.stringify([name, owner, records]);
}

/**
 * The journal entries of a pass's state against `previous` (token id → digest): every name, or
 * (`scope`) those token ids and the state's names; with `lastPrimary` (the last pass's primary
 * names by wallet), the primary names' changes too.
 */
export function snsChanges(
  source: Pick<CrawlerSource, "id" | "chainId">,
  at: { slot: number; now: number },
  state: ReturnType<typeof snsStateOf>,
  scope: ReadonlySet<string> | null,
  previous: ReadonlyMap<string, string>,
  lastPrimary: ReadonlyMap<string, string> | null,
) {
  const { slot } = at;
  const entries: JournalEntry[] = [];
  const events: DomainEvent[][] = [];
  const blockHash = `slot:${slot}`;
  // The slot's time as the source saw it read (seconds): the devnet's endpoint has no getBlockTime.
  const blockTime = Math.floor(at.now / 1000);
  const push = (contract: string, tokenId: string, list: DomainEvent[]) => {
    entries.push({
      sourceId: source.id,
      chainId: source.chainId,
      blockNumber: slot,
      blockHash,
      logIndex: entries.length,
      txHash: "",
      contract,
      tokenId,
      event: JSON.stringify(list),
      blockTime,
    });
    events.push(list);
  };
  const next = new Map<string, string>();
  if (scope !== null) for (const [k, v] of previous) if (!scope.has(k)) next.set(k, v);
  let changed = 0;
  for (const d of state.domains) {
    const tokenId = snsTokenId(d.key);
    const digest = snsDigest(d.name, d.owner, d.records);
    next.set(tokenId, digest);
    if (previous.get(tokenId) === digest) continue;
    changed++;
    push(d.key, tokenId, snsEventsOf(d.key, d));
  }
  let released = 0;
  for (const tokenId of previous.keys()) {
    if (next.has(tokenId) || (scope !== null && !scope.has(tokenId))) continue;
    released++;
    const key = addressOf(Buffer.from(tokenId.slice(2), "hex"));
    push(key, tokenId, snsEventsOf(key, null));
  }
  if (lastPrimary === null)
    return { entries, events, next, primary: new Map<string, string>(), changed, released };
  // A partial pass keeps the primaries of wallets it did not see (their name is out of scope).
  const primary = new Map<string, string>();
  if (scope !== null) for (const [w, t] of lastPrimary) if (!scope.has(t)) primary.set(w, t);
  for (const [wallet, key] of state.primaries) primary.set(wallet, snsTokenId(key));
  for (const [wallet, tokenId] of primary)
    if (lastPrimary.get(wallet) !== tokenId)
      push(wallet, reverseKey(wallet), [
        { type: "reverse-set", address: wallet, tokenId: tokenId as `0x${string}` },
      ]);
  for (const wallet of lastPrimary.keys())
    if (!primary.has(wallet))
      push(wallet, reverseKey(wallet), [{ type: "reverse-removed", address: wallet }]);
  return { entries, events, next, primary, changed, released };
}
