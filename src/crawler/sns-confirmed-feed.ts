import type { Address } from "@solana/kit";
import type { ChangeEvent, ChangeEventWrite } from "../domain/change-events.js";
import type { DomainEvent } from "../providers/provider.js";
import { type RawAccount, snsStateOf, snsTokenId } from "../providers/sns/sns-state.js";
import type { JournalEntry } from "../store/crawler-log.port.js";
import { applyRangeIn, type RangeTx, type RangeWrite, retraction } from "./apply-range.js";
import type { CrawlerSource, CrawlerStore, SignalsFn } from "./crawler-source.js";
import { snsChanges } from "./sns-changes.js";
import { partialSnapshot, touchedDomains } from "./sns-partial.js";
import type { SolanaReader } from "./solana-reader.js";

/** A pass's journal entries at a slot, and the checkpoint there: the range the map applies. */
export function slotRange(
  source: CrawlerSource,
  slot: number,
  entries: JournalEntry[],
  events: DomainEvent[][],
  now: number,
): RangeWrite {
  return {
    entries,
    events,
    checkpoint: {
      sourceId: source.id,
      chainId: source.chainId,
      blockNumber: slot,
      blockHash: `slot:${slot}`,
      updatedAt: now,
      state: "live",
      error: null,
    },
    recentBlocks: [],
    pruneBelow: 0,
  };
}

/** Thrown to roll back the projection of a confirmed pass (its events are kept, not its writes). */
const ROLLED_BACK = new Error("rolled back: the map stays at finalized");

interface AnnouncedRange {
  slot: number;
  entries: JournalEntry[];
  events: DomainEvent[][];
}

export interface ConfirmedFeedOptions {
  source: CrawlerSource;
  store: CrawlerStore;
  signals: SignalsFn;
  clock: () => number;
  /** The reader at `confirmed`. */
  reader: SolanaReader;
  /** The source's state: the last pass's digests by token id (null before it), names' tops, its slot. */
  view(): {
    last: ReadonlyMap<string, string> | null;
    topOf: ReadonlyMap<Address, Address>;
    synced: number;
  };
  /** winner.changed of kept announcements, in the settling transaction (SnsSyncOptions.winnersOf). */
  winnersOf?: (tx: RangeTx, announced: ChangeEvent[]) => Promise<ChangeEventWrite[]>;
}

/**
 * The SNS source's change feed at `confirmed` (docs/sns.md, "Change feed at confirmed"): it
 * announces the notified names' changes before the map (at `finalized`) reaches them, and settles
 * each announcement in the finalized pass that reaches its slot: kept, or retracted.
 */
export function createConfirmedFeed(o: ConfirmedFeedOptions) {
  const { clock } = o;
  /**
   * What the change feed announced at `confirmed` and the map has not reached yet: token id → the
   * slots and digests (null: gone) announced, in order. The journal entries are kept to replay
   * them under the next announcement (its "before" is the announced state, not the map's). A
   * digest `undefined`: announced before this process started (recovered from the change log),
   * its state unknown, so it is retracted when settled and the map's own event follows.
   */
  const tentative = new Map<string, Array<{ slot: number; digest: string | null | undefined }>>();
  let tentativeRanges: AnnouncedRange[] = [];

  /** Announcements at confirmed a previous process made and did not settle: above its checkpoint. */
  async function recover(): Promise<void> {
    const checkpoint = await o.store.crawlerLog.getCheckpoint(o.source.id);
    if (!checkpoint) return;
    for (const e of await o.store.changeLog.findRetractableChangeEvents(
      o.source.id,
      checkpoint.blockNumber,
    )) {
      if (!e.type.startsWith("domain.")) continue;
      const list = tentative.get(e.tokenId) ?? [];
      list.push({ slot: e.blockNumber, digest: undefined });
      tentative.set(e.tokenId, list);
    }
  }

  /**
   * Announces, at `confirmed`, the changes of the names the notified accounts belong to: reads
   * them at `confirmed` (the partial pass's reads), compares with what was announced (the map's
   * state, then the confirmed changes announced since), and appends the change events the map
   * would get, made by the map's own projection in a transaction that is then rolled back (the
   * map stays at `finalized`). Nothing when an account cannot be placed or the finalized pass is
   * already there: that pass reports the change itself. Returns the events appended.
   */
  async function announce(accounts: readonly RawAccount[], names: Iterable<Address> = []): Promise<number> {
    const { last, topOf, synced } = o.view();
    if (last === null) return 0;
    const domains = touchedDomains(accounts, topOf);
    if (domains === null) return 0;
    for (const name of names) domains.add(topOf.get(name) ?? name);
    if (domains.size === 0) return 0;
    const snap = await partialSnapshot(o.reader, [...domains]);
    if (snap.slot <= synced) return 0;
    const keys: Address[] = [];
    for (const [key, top] of topOf) if (domains.has(top)) keys.push(key);
    for (const d of domains) if (!topOf.has(d)) keys.push(d);
    const announced = new Map(last);
    for (const [tokenId, list] of tentative) {
      const digest = list[list.length - 1].digest;
      if (digest === undefined) continue;
      if (digest === null) announced.delete(tokenId);
      else announced.set(tokenId, digest);
    }
    const scope = new Set<string>(keys.map(snsTokenId));
    const { slot } = snap;
    const { entries, events, next } = snsChanges(
      o.source,
      { slot, now: clock() },
      snsStateOf(snap),
      scope,
      announced,
      null,
    );
    if (entries.length === 0) return 0;
    const range = (r: AnnouncedRange) => slotRange(o.source, r.slot, r.entries, r.events, clock());
    const mine = { slot: snap.slot, entries, events };
    let made: ChangeEvent[] = [];
    await o.store
      .transaction(async (tx) => {
        for (const r of tentativeRanges) await applyRangeIn(tx, o.source, range(r), o.signals);
        const mark = (await tx.changeLog.changeLogBounds()).newest;
        await applyRangeIn(tx, o.source, range(mine), o.signals);
        made = await tx.changeLog.findChangeEventsAfter(mark, 100_000);
        throw ROLLED_BACK;
      })
      .catch((e) => {
        if (e !== ROLLED_BACK) throw e;
      });
    const domainEvents = made.filter((e) => e.type.startsWith("domain."));
    if (domainEvents.length > 0)
      await o.store.transaction((tx) =>
        tx.changeLog.appendChangeEvents(
          domainEvents.map(({ id: _, ...write }) => ({
            ...write,
            payload: { ...write.payload, announced: true },
          })),
        ),
      );
    tentativeRanges.push(mine);
    for (const e of entries) {
      const tokenId = e.tokenId as string;
      if (!scope.has(tokenId) && !next.has(tokenId)) continue;
      const list = tentative.get(tokenId) ?? [];
      list.push({ slot: snap.slot, digest: next.get(tokenId) ?? null });
      tentative.set(tokenId, list);
    }
    return domainEvents.length;
  }

  /**
   * The settlement, in the finalized pass's transaction, of what was announced at `confirmed`
   * up to its slot (docs/sns.md): a name whose finalized state is the one announced keeps its
   * confirmed events and the pass's own event is dropped (no duplicate); any other name's
   * confirmed events are retracted (`change.retracted`, at the pass's slot) and the pass's event,
   * if any, stands. A partial pass settles its own names only.
   */
  function settle(slot: number, next: ReadonlyMap<string, string>, scope: ReadonlySet<string> | null) {
    return async (tx: RangeTx, events: ChangeEventWrite[]): Promise<ChangeEventWrite[]> => {
      const due = [...tentative].filter(([tokenId]) => scope === null || scope.has(tokenId));
      if (due.length === 0) return events;
      const lowest = Math.min(...due.map(([, list]) => list[0].slot));
      const open = await tx.changeLog.findRetractableChangeEvents(o.source.id, lowest - 1);
      const keep = new Set<string>();
      const kept: ChangeEvent[] = [];
      const out: ChangeEventWrite[] = [];
      const at = { blockNumber: slot, blockHash: `slot:${slot}`, txHash: null, blockTime: null };
      for (const [tokenId, list] of due) {
        const settled = list.filter((t) => t.slot <= slot);
        if (settled.length === 0) continue;
        const slots = new Set(settled.map((t) => t.slot));
        const mine = open.filter((e) => e.tokenId === tokenId && slots.has(e.blockNumber));
        if (settled[settled.length - 1].digest === (next.get(tokenId) ?? null)) {
          keep.add(tokenId);
          kept.push(...mine);
        } else for (const e of mine) out.push(retraction(e, at, clock()));
        const left = list.slice(settled.length);
        if (left.length > 0) tentative.set(tokenId, left);
        else tentative.delete(tokenId);
      }
      tentativeRanges = tentativeRanges.filter((r) => r.slot > slot);
      // The kept announcements are the map's now: rank them as the deriver ranks the map's events.
      const winners =
        o.winnersOf && kept.length > 0
          ? await o.winnersOf(
              tx,
              kept
                .filter((e) => e.type.startsWith("domain."))
                .sort((a, b) => a.id - b.id)
                .map((e) => ({ ...e, payload: { ...e.payload, announced: undefined } })),
            )
          : [];
      return [...out, ...events.filter((e) => !keep.has(e.tokenId)), ...winners];
    };
  }

  return { recover, announce, settle };
}
