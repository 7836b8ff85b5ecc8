import { type Address, createSolanaRpcSubscriptions } from "@solana/kit";
import type { Logger } from "pino";
import type { DomainEvent } from "../providers/provider.js";
import {
  addressOf,
  domainKeyOf,
  RECORDS_V2_CLASS,
  SNS_PROGRAMS,
  tokenizedMintOf,
} from "../providers/sns/sns-program.js";
import { SNS_RECORDS, type SnsRecord } from "../providers/sns/sns-records.js";
import {
  type RawAccount,
  type SnsDomainState,
  type SnsIssue,
  type SnsSnapshot,
  snsEventsOf,
  snsStateOf,
  snsTokenId,
} from "../providers/sns/sns-state.js";
import type { JournalEntry } from "../store/crawler-log.port.js";
import type { ChangeEvent, ChangeEventWrite } from "../domain/change-events.js";
import { applyRange, applyRangeIn, type RangeTx, type RangeWrite, retraction } from "./apply-range.js";
import type { CrawlerSource, CrawlerStore, SignalsFn } from "./crawler-source.js";
import { reverseKey } from "./projection.js";
import { partialSnapshot, touchedDomains } from "./sns-partial.js";
import { createSolanaReader, type SolanaReader } from "./solana-reader.js";
import type { SourceStatus } from "./source-progress.js";

export interface SnsSyncOptions {
  source: CrawlerSource;
  store: CrawlerStore;
  signals: SignalsFn;
  log: Logger;
  clock?: () => number;
  pollIntervalMs?: number;
  /** The WebSocket endpoint whose `programSubscribe` wakes the source at once; null: poll only. */
  wsUrl?: string | null;
  /** Read each domain's children (subdomains, V1 records), one `getProgramAccounts` per parent. Default true. */
  children?: boolean;
  /** At most this many `getProgramAccounts` of children in flight. Default 8. */
  concurrency?: number;
  reader?: SolanaReader;
  /**
   * Announce changes on the change feed at `confirmed` (a pass over the notified names at that
   * commitment), settled when the map reaches them at `finalized`: docs/sns.md, "Change feed at
   * confirmed". Default: on when there is a WebSocket.
   */
  confirmedFeed?: boolean;
  /** The reader at `confirmed` (default: the source's RPC URL at `confirmed`). */
  confirmedReader?: SolanaReader;
  /** At most this many tokenized names' NFTs followed live (`accountSubscribe`); the rest wait for the poll. Default 1,000. */
  maxWatchedNfts?: number;
  /**
   * The winner.changed events of announced changes, ranked in the settling transaction, whose map
   * has just reached them (the winner deriver's `derive` over that transaction; composed by
   * cli/sns-source.ts). Without it, an announced change that moves a collision's winner gets no
   * winner.changed (the deriver leaves announcements alone: docs/sns.md).
   */
  winnersOf?: (tx: RangeTx, announced: ChangeEvent[]) => Promise<ChangeEventWrite[]>;
}

export interface SnsScanStats {
  slot: number;
  domains: number;
  changed: number;
  released: number;
  primaries: number;
  issues: SnsIssue[];
}

/** Notified accounts kept for a partial pass; past this, the next pass is a full one. */
const MAX_PENDING = 1000;

/**
 * Tokenized names whose NFT holder's token account the source watches by default (docs/sns.md,
 * "NFT transfers"): one `accountSubscribe` each at `finalized`, and one at `confirmed` with the
 * confirmed feed; 100 to a WebSocket (kit's channel pool).
 */
export const MAX_WATCHED_NFTS = 1000;

/** Thrown to roll back the projection of a confirmed pass (its events are kept, not its writes). */
const ROLLED_BACK = new Error("rolled back: the map stays at finalized");

const digestOf = (d: SnsDomainState) => JSON.stringify([d.name, d.owner, d.records]);

/**
 * The Solana Name Service source (docs/sns.md): each pass reads the SNS programs' accounts with
 * `getProgramAccounts` (paged by parent: the `.sol` root's children, then each domain's own),
 * folds them into each name's state (providers/sns/sns-state.ts), and journals, at the pass's
 * slot, the full state of every name that changed since the last pass (Solana gives states, not
 * events). A name account's address is its token id and the journal's `contract` (provenance),
 * the slot its block. Passes repeat on every `programNotification` of the name service (its
 * WebSocket) or every `pollIntervalMs`. Changes reach the change feed earlier, at `confirmed`
 * (confirmedPass), and are settled (kept, or retracted) when the map reaches them (settlement). A restart compares the first pass with the map instead of
 * the last pass, so unchanged names are not journaled again; Solana's RPC has no "accounts changed
 * since slot", so that first pass is a full read.
 *
 * @example const sync = createSnsSync({ source, store, signals, log }); await sync.scanOnce();
 */
export function createSnsSync(o: SnsSyncOptions) {
  const reader = o.reader ?? createSolanaReader(o.source.rpcUrl);
  const clock = o.clock ?? Date.now;
  let last: Map<string, string> | null = null;
  let lastPrimary = new Map<string, string>();
  /** Every named account (second-level names and subdomains) → its second-level name's account. */
  let topOf = new Map<Address, Address>();
  /** Name service accounts notified since the last pass (programSubscribe); null: too many, or a full pass is due. */
  let pending: RawAccount[] | null = [];
  /** Names whose NFT's token account was notified since the last pass (accountSubscribe). */
  const pendingNames = new Set<Address>();
  /** Tokenized names of the last passes: name account → the token account holding its NFT. */
  let nftAccounts = new Map<Address, Address>();
  /** The token accounts subscribed to: → their name, their own abort, whether the RPC acknowledged. */
  const watched = new Map<Address, { name: Address; abort: AbortController; live: boolean }>();
  let subscriptions: { client: ReturnType<typeof createSolanaRpcSubscriptions>; signal: AbortSignal } | null =
    null;
  let warnedNftLimit = false;
  const confirmedFeed = o.confirmedFeed ?? Boolean(o.wsUrl);
  const confirmedReader = o.confirmedReader ?? createSolanaReader(o.source.rpcUrl, "confirmed");
  /** Name service accounts notified at `confirmed` since the last confirmed pass. */
  let pendingConfirmed: RawAccount[] = [];
  /** Names whose NFT's token account was notified at `confirmed` since the last confirmed pass. */
  const pendingConfirmedNames = new Set<Address>();
  /**
   * What the change feed announced at `confirmed` and the map has not reached yet: token id → the
   * slots and digests (null: gone) announced, in order. The journal entries are kept to replay
   * them under the next announcement (its "before" is the announced state, not the map's). A
   * digest `undefined`: announced before this process started (recovered from the change log),
   * its state unknown, so it is retracted when settled and the map's own event follows.
   */
  const tentative = new Map<string, Array<{ slot: number; digest: string | null | undefined }>>();
  let tentativeRanges: Array<{ slot: number; entries: JournalEntry[]; events: DomainEvent[][] }> = [];
  let stopped = false;
  let wake: (() => void) | null = null;
  const issuesSeen = new Set<string>();
  // For status(): the highest slot heard of (a pass's read, a notification), the last pass's slot.
  let head: number | null = null;
  let synced = 0;
  let eventsApplied = 0;
  let passError: string | null = null;
  let passes = 0;
  let updatedAt = clock();

  async function loadLast(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    // Announcements at confirmed a previous process made and did not settle: above its checkpoint.
    const checkpoint = await o.store.crawlerLog.getCheckpoint(o.source.id);
    if (checkpoint && confirmedFeed)
      for (const e of await o.store.changeLog.findRetractableChangeEvents(
        o.source.id,
        checkpoint.blockNumber,
      )) {
        if (!e.type.startsWith("domain.")) continue;
        const list = tentative.get(e.tokenId) ?? [];
        list.push({ slot: e.blockNumber, digest: undefined });
        tentative.set(e.tokenId, list);
      }
    for await (const page of o.store.domainMap.iterateDomains(1000))
      for (const d of page) {
        if (d.provider !== o.source.provider || d.network !== o.source.network) continue;
        const natives = new Map<string, string>();
        for (const r of d.records) natives.set(r.nativeKey, r.nativeValue);
        const records = [...natives].sort(
          (a, b) => SNS_RECORDS.indexOf(a[0] as SnsRecord) - SNS_RECORDS.indexOf(b[0] as SnsRecord),
        );
        out.set(d.tokenId, JSON.stringify([d.name, d.owner, records]));
        noteTop(d.name, addressOf(Buffer.from(d.tokenId.slice(2), "hex")));
      }
    return out;
  }

  function noteTop(name: string, key: Address): void {
    const labels = name.split(".");
    const top = labels.length > 2 ? domainKeyOf(labels.slice(1).join(".")) : key;
    if (top) topOf.set(key, top);
  }

  async function snapshot(): Promise<SnsSnapshot> {
    const slot = await reader.slot();
    const ns = SNS_PROGRAMS.nameService;
    const [domains, reverses, recordsV2, primaries, nftRecords] = await Promise.all([
      reader.programAccounts(ns, [{ memcmp: { offset: 0, bytes: SNS_PROGRAMS.solRoot } }]),
      reader.programAccounts(ns, [{ memcmp: { offset: 64, bytes: SNS_PROGRAMS.reverseClass } }]),
      reader.programAccounts(ns, [{ memcmp: { offset: 64, bytes: RECORDS_V2_CLASS } }]),
      reader.programAccounts(SNS_PROGRAMS.nameOffers, [{ dataSize: 33 }]),
      reader.programAccounts(SNS_PROGRAMS.tokenizer, [{ dataSize: 98 }]),
    ]);
    const children: RawAccount[] = [];
    if (o.children ?? true) {
      const queue = domains.filter((d) => d.data.length >= 96).map((d) => d.address);
      const worker = async () => {
        for (let k = queue.pop(); k !== undefined; k = queue.pop())
          children.push(...(await reader.programAccounts(ns, [{ memcmp: { offset: 0, bytes: k } }])));
      };
      await Promise.all(Array.from({ length: o.concurrency ?? 8 }, worker));
    }
    const nftHolders = new Map<Address, Address | null>();
    const nftAccounts = new Map<Address, Address>();
    for (const n of nftRecords) {
      // NFT record: tag, nonce, name account (2..34), owner, mint. Active records only (tag 2).
      if (n.data[0] !== 2) continue;
      const domain = addressOf(n.data.subarray(2, 34));
      const holding = await reader.nftHolding(tokenizedMintOf(domain));
      nftHolders.set(domain, holding?.holder ?? null);
      if (holding) nftAccounts.set(domain, holding.tokenAccount);
    }
    return { slot, domains, reverses, recordsV2, children, primaries, nftHolders, nftAccounts };
  }

  /** One pass: read every account, fold, journal what changed. */
  async function scanOnce(): Promise<SnsScanStats> {
    if (last === null) last = await loadLast();
    pending = [];
    pendingNames.clear();
    const snap = await snapshot();
    const stats = await journal(snap.slot, snsStateOf(snap), null);
    nftAccounts = new Map(snap.nftAccounts);
    watchNfts();
    return stats;
  }

  /**
   * A pass over the names that notified accounts belong to (and their subdomains) only: the
   * same fold and journal as a full pass, restricted to them. A full pass instead when an account
   * cannot be placed (touchedDomains) or before the first pass.
   */
  async function scanNames(
    accounts: readonly RawAccount[],
    names: Iterable<Address> = [],
  ): Promise<SnsScanStats & { partial: boolean }> {
    const domains = last === null ? null : touchedDomains(accounts, topOf);
    if (domains === null) return { ...(await scanOnce()), partial: false };
    for (const name of names) domains.add(topOf.get(name) ?? name);
    const snap = await partialSnapshot(reader, [...domains]);
    const keys: Address[] = [];
    for (const [key, top] of topOf) if (domains.has(top)) keys.push(key);
    const scope = { keys, tokens: new Set<string>(keys.map(snsTokenId)) };
    const stats = await journal(snap.slot, snsStateOf(snap), scope);
    for (const key of [...keys, ...domains]) nftAccounts.delete(key);
    for (const [key, account] of snap.nftAccounts ?? []) nftAccounts.set(key, account);
    watchNfts();
    return { ...stats, partial: true };
  }

  /**
   * Announces, at `confirmed`, the changes of the names the notified accounts belong to: reads
   * them at `confirmed` (the partial pass's reads), compares with what was announced (the map's
   * state, then the confirmed changes announced since), and appends the change events the map
   * would get, made by the map's own projection in a transaction that is then rolled back (the
   * map stays at `finalized`). Nothing when an account cannot be placed or the finalized pass is
   * already there: that pass reports the change itself. Returns the events appended.
   */
  async function confirmedPass(
    accounts: readonly RawAccount[],
    names: Iterable<Address> = [],
  ): Promise<number> {
    if (last === null) return 0;
    const domains = touchedDomains(accounts, topOf);
    if (domains === null) return 0;
    for (const name of names) domains.add(topOf.get(name) ?? name);
    if (domains.size === 0) return 0;
    const snap = await partialSnapshot(confirmedReader, [...domains]);
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
    const { entries, events, next } = changesOf(snap.slot, snsStateOf(snap), scope, announced, false);
    if (entries.length === 0) return 0;
    const range = (r: { slot: number; entries: JournalEntry[]; events: DomainEvent[][] }): RangeWrite => ({
      entries: r.entries,
      events: r.events,
      checkpoint: {
        sourceId: o.source.id,
        chainId: o.source.chainId,
        blockNumber: r.slot,
        blockHash: `slot:${r.slot}`,
        updatedAt: clock(),
        state: "live",
        error: null,
      },
      recentBlocks: [],
      pruneBelow: 0,
    });
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
  function settlement(slot: number, next: ReadonlyMap<string, string>, scope: ReadonlySet<string> | null) {
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

  /**
   * Keeps one `accountSubscribe` on the token account holding each tokenized name's NFT (up to
   * `maxWatchedNfts`): a transfer of the NFT empties that account (or an authority change rewrites
   * its owner), the notification queues a pass over that name alone, and that pass finds the new
   * holder's account to watch instead. Called after every pass; a no-op without a WebSocket.
   */
  function watchNfts(): void {
    if (subscriptions === null) return;
    const { client, signal } = subscriptions;
    const max = o.maxWatchedNfts ?? MAX_WATCHED_NFTS;
    const want = new Map<Address, Address>();
    for (const [name, account] of nftAccounts) if (want.size < max) want.set(account, name);
    if (nftAccounts.size > max && !warnedNftLimit) {
      warnedNftLimit = true;
      o.log.warn(
        { source: o.source.id, tokenized: nftAccounts.size, watched: max },
        "more tokenized SNS names than NFT subscriptions: the rest wait for the poll",
      );
    }
    for (const [account, w] of watched)
      if (want.get(account) !== w.name) {
        w.abort.abort();
        watched.delete(account);
      }
    for (const [account, name] of want) {
      if (watched.has(account)) continue;
      const abort = new AbortController();
      const entry = { name, abort, live: false };
      watched.set(account, entry);
      const both = AbortSignal.any([signal, abort.signal]);
      // At `finalized` for the map's pass; with the confirmed feed, at `confirmed` too, so that the
      // transfer is announced as early as the name service's own changes.
      let acknowledged = 0;
      const follow = async (commitment: "finalized" | "confirmed") => {
        const it = await client
          .accountNotifications(account, { commitment, encoding: "base64" })
          .subscribe({ abortSignal: both });
        if (++acknowledged === (confirmedFeed ? 2 : 1)) entry.live = true;
        for await (const n of it) {
          if (commitment === "confirmed") pendingConfirmedNames.add(name);
          else {
            head = Math.max(head ?? 0, Number(n.context.slot));
            pendingNames.add(name);
          }
          wake?.();
        }
      };
      Promise.all([follow("finalized"), confirmedFeed ? follow("confirmed") : undefined]).catch((e) => {
        if (both.aborted) return;
        o.log.warn({ err: e, source: o.source.id, account }, "SNS NFT subscription lost; polling");
        if (watched.get(account) === entry) watched.delete(account);
      });
    }
  }

  /**
   * The journal entries of a pass's state against `previous` (token id → digest): every name, or
   * (`scope`) those token ids and the state's names; with `primaries`, the primary names' changes
   * too (against the last pass's).
   */
  function changesOf(
    slot: number,
    state: ReturnType<typeof snsStateOf>,
    scope: ReadonlySet<string> | null,
    previous: ReadonlyMap<string, string>,
    primaries: boolean,
  ) {
    const entries: JournalEntry[] = [];
    const events: DomainEvent[][] = [];
    const blockHash = `slot:${slot}`;
    // The slot's time as the source saw it read (seconds): the devnet's endpoint has no getBlockTime.
    const blockTime = Math.floor(clock() / 1000);
    const push = (contract: string, tokenId: string, list: DomainEvent[]) => {
      entries.push({
        sourceId: o.source.id,
        chainId: o.source.chainId,
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
      const digest = digestOf(d);
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
    if (!primaries) return { entries, events, next, primary: lastPrimary, changed, released };
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

  /** Journals what changed since the last pass: every name, or (`scope`) those token ids and the state's names. */
  async function journal(
    slot: number,
    state: ReturnType<typeof snsStateOf>,
    partial: { keys: Address[]; tokens: Set<string> } | null,
  ): Promise<SnsScanStats> {
    const scope = partial?.tokens ?? null;
    const { entries, events, next, primary, changed, released } = changesOf(
      slot,
      state,
      scope,
      last ?? new Map<string, string>(),
      true,
    );
    const nextTop = scope === null ? new Map<Address, Address>() : topOf;
    const blockHash = `slot:${slot}`;
    const fresh = state.issues.filter((i) => !issuesSeen.has(`${i.account}:${i.reason}`));
    for (const i of fresh) issuesSeen.add(`${i.account}:${i.reason}`);
    if (fresh.length > 0)
      o.log.warn(
        { source: o.source.id, count: fresh.length, issues: fresh.slice(0, 20) },
        "SNS accounts skipped",
      );
    await applyRange(
      o.store,
      o.source,
      {
        entries,
        events,
        checkpoint: {
          sourceId: o.source.id,
          chainId: o.source.chainId,
          blockNumber: slot,
          blockHash,
          updatedAt: clock(),
          state: "live",
          error: null,
        },
        recentBlocks: [],
        pruneBelow: 0,
        // A partial pass settles the names it read: its scope and the state's names (a name
        // registered since the last pass is in the state, not yet in the scope).
        settle: confirmedFeed
          ? settlement(
              slot,
              next,
              scope === null ? null : new Set([...scope, ...state.domains.map((d) => snsTokenId(d.key))]),
            )
          : undefined,
      },
      o.signals,
    );
    last = next;
    lastPrimary = primary;
    for (const key of partial?.keys ?? []) topOf.delete(key);
    topOf = nextTop;
    for (const d of state.domains) noteTop(d.name, d.key);
    head = Math.max(head ?? 0, slot);
    synced = slot;
    eventsApplied += entries.length;
    passes++;
    passError = null;
    updatedAt = clock();
    return {
      slot: slot,
      domains: state.domains.length,
      changed,
      released,
      primaries: primary.size,
      issues: state.issues,
    };
  }

  /**
   * Wakes the loop on program notifications; returns the unsubscriber. The name service's accounts
   * are kept for a pass over the names they touch; a primary-domain account (name offers program,
   * 33 bytes) cannot be placed without its wallet, so it asks for a full pass at once.
   */
  function subscribe(): () => void {
    if (!o.wsUrl) return () => {};
    const abort = new AbortController();
    const subs = createSolanaRpcSubscriptions(o.wsUrl);
    subscriptions = { client: subs, signal: abort.signal };
    watchNfts();
    const follow = async (program: Address, filters: Array<{ dataSize: bigint }>, partial: boolean) => {
      const it = await subs
        .programNotifications(program, { commitment: "finalized", encoding: "base64", filters })
        .subscribe({ abortSignal: abort.signal });
      for await (const n of it) {
        head = Math.max(head ?? 0, Number(n.context.slot));
        const data = new Uint8Array(Buffer.from(n.value.account.data[0], "base64"));
        if (partial && pending !== null && pending.length < MAX_PENDING)
          pending.push({ address: n.value.pubkey, data });
        else pending = null;
        wake?.();
      }
    };
    const followConfirmed = async () => {
      const it = await subs
        .programNotifications(SNS_PROGRAMS.nameService, { commitment: "confirmed", encoding: "base64" })
        .subscribe({ abortSignal: abort.signal });
      for await (const n of it) {
        if (pendingConfirmed.length >= MAX_PENDING) continue;
        pendingConfirmed.push({
          address: n.value.pubkey,
          data: new Uint8Array(Buffer.from(n.value.account.data[0], "base64")),
        });
        wake?.();
      }
    };
    Promise.all([
      follow(SNS_PROGRAMS.nameService, [], true),
      follow(SNS_PROGRAMS.nameOffers, [{ dataSize: 33n }], false),
      confirmedFeed ? followConfirmed() : undefined,
    ]).catch((e) => {
      if (!abort.signal.aborted)
        o.log.warn({ err: e, source: o.source.id }, "SNS subscription lost; polling");
    });
    return () => {
      abort.abort();
      subscriptions = null;
      watched.clear();
    };
  }

  return {
    scanOnce,
    scanNames,
    /** The NFT token accounts followed live: subscribed and acknowledged by the RPC. */
    watchedNfts(): Address[] {
      return [...watched].filter(([, w]) => w.live).map(([account]) => account);
    },
    /** The source as GET /status shows it: head slot (heard of), synced slot, lag, state. */
    status(): SourceStatus {
      const state = stopped ? "stopped" : passError ? "retrying" : passes > 0 ? "live" : "backfill";
      return {
        id: o.source.id,
        provider: o.source.provider,
        network: o.source.network,
        chainId: o.source.chainId,
        state,
        head,
        checkpoint: synced,
        lag: head === null || passes === 0 ? null : Math.max(0, head - synced),
        eventsApplied,
        eventsPerSecond: 0,
        etaSeconds: null,
        rangeSize: 0,
        error: passError,
        updatedAt,
      };
    },
    /** Passes until `stop()`: after each, waits for a program notification or the poll interval. */
    async run(): Promise<void> {
      const unsubscribe = subscribe();
      try {
        let notified = false;
        while (!stopped) {
          try {
            // Announced at confirmed first; before the first pass there is nothing to compare with
            // (that pass reports the change), and a failing pass must not leave them to spin on.
            if (pendingConfirmed.length > 0 || pendingConfirmedNames.size > 0) {
              const heard = pendingConfirmed;
              const heardNames = [...pendingConfirmedNames];
              pendingConfirmed = [];
              pendingConfirmedNames.clear();
              // A failed announcement is not a failed pass: the finalized pass reports the change.
              if (last !== null)
                await confirmedPass(heard, heardNames).catch((e) =>
                  o.log.warn({ err: e, source: o.source.id }, "SNS confirmed pass failed"),
                );
            }
            const touched = pending;
            const names = [...pendingNames];
            // Woken by notifications: re-read only the names they touch; else (the poll) every account.
            if (notified && touched !== null && touched.length + names.length > 0) {
              pending = [];
              pendingNames.clear();
              await scanNames(touched, names);
            } else if (!notified || touched === null) await scanOnce();
          } catch (e) {
            passError = (e as Error).message;
            updatedAt = clock();
            o.log.warn({ err: e, source: o.source.id }, "SNS pass failed; retrying");
          }
          if (stopped) break;
          if (
            pending === null ||
            pending.length > 0 ||
            pendingNames.size > 0 ||
            pendingConfirmed.length > 0 ||
            pendingConfirmedNames.size > 0
          ) {
            notified = true; // heard during the pass
            continue;
          }
          notified = await new Promise<boolean>((resolve) => {
            const t = setTimeout(() => resolve(false), o.pollIntervalMs ?? 2000);
            wake = () => {
              clearTimeout(t);
              resolve(true);
            };
          });
          wake = null;
        }
      } finally {
        unsubscribe();
      }
    },
    stop() {
      stopped = true;
      wake?.();
    },
  };
}

export type SnsSync = ReturnType<typeof createSnsSync>;
