import { type Address, createSolanaRpcSubscriptions } from "@solana/kit";
import type { Logger } from "pino";
import { addressOf, domainKeyOf, SNS_PROGRAMS } from "../providers/sns/sns-program.js";
import { SNS_RECORDS, type SnsRecord } from "../providers/sns/sns-records.js";
import { type RawAccount, type SnsIssue, snsStateOf, snsTokenId } from "../providers/sns/sns-state.js";
import type { ChangeEvent, ChangeEventWrite } from "../domain/change-events.js";
import { applyRange, type RangeTx } from "./apply-range.js";
import type { CrawlerSource, CrawlerStore, SignalsFn } from "./crawler-source.js";
import { snsChanges, snsDigest } from "./sns-changes.js";
import { createConfirmedFeed, slotRange } from "./sns-confirmed-feed.js";
import { createNftWatch } from "./sns-nft-watch.js";
import { fullSnapshot, partialSnapshot, touchedDomains } from "./sns-partial.js";
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
  const confirmedFeed = o.confirmedFeed ?? Boolean(o.wsUrl);
  const nfts = createNftWatch({
    sourceId: o.source.id,
    log: o.log,
    max: o.maxWatchedNfts,
    confirmed: confirmedFeed,
    onChange(name, commitment, slot) {
      if (commitment === "confirmed") pendingConfirmedNames.add(name);
      else {
        head = Math.max(head ?? 0, slot);
        pendingNames.add(name);
      }
      wake?.();
    },
  });
  /** Name service accounts notified at `confirmed` since the last confirmed pass. */
  let pendingConfirmed: RawAccount[] = [];
  /** Names whose NFT's token account was notified at `confirmed` since the last confirmed pass. */
  const pendingConfirmedNames = new Set<Address>();
  const feed = createConfirmedFeed({
    source: o.source,
    store: o.store,
    signals: o.signals,
    clock,
    reader: o.confirmedReader ?? createSolanaReader(o.source.rpcUrl, "confirmed"),
    view: () => ({ last, topOf, synced }),
    winnersOf: o.winnersOf,
  });
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
    if (confirmedFeed) await feed.recover();
    for await (const page of o.store.domainMap.iterateDomains(1000))
      for (const d of page) {
        if (d.provider !== o.source.provider || d.network !== o.source.network) continue;
        const natives = new Map<string, string>();
        for (const r of d.records) natives.set(r.nativeKey, r.nativeValue);
        const records = [...natives].sort(
          (a, b) => SNS_RECORDS.indexOf(a[0] as SnsRecord) - SNS_RECORDS.indexOf(b[0] as SnsRecord),
        );
        out.set(d.tokenId, snsDigest(d.name, d.owner, records));
        noteTop(d.name, addressOf(Buffer.from(d.tokenId.slice(2), "hex")));
      }
    return out;
  }

  function noteTop(name: string, key: Address): void {
    const labels = name.split(".");
    const top = labels.length > 2 ? domainKeyOf(labels.slice(1).join(".")) : key;
    if (top) topOf.set(key, top);
  }

  /** One pass: read every account, fold, journal what changed. */
  async function scanOnce(): Promise<SnsScanStats> {
    if (last === null) last = await loadLast();
    pending = [];
    pendingNames.clear();
    const snap = await fullSnapshot(reader, o);
    const stats = await journal(snap.slot, snsStateOf(snap), null);
    nftAccounts = new Map(snap.nftAccounts);
    nfts.follow(nftAccounts);
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
    nfts.follow(nftAccounts);
    return { ...stats, partial: true };
  }

  /** Journals what changed since the last pass: every name, or (`scope`) those token ids and the state's names. */
  async function journal(
    slot: number,
    state: ReturnType<typeof snsStateOf>,
    partial: { keys: Address[]; tokens: Set<string> } | null,
  ): Promise<SnsScanStats> {
    const scope = partial?.tokens ?? null;
    const { entries, events, next, primary, changed, released } = snsChanges(
      o.source,
      { slot, now: clock() },
      state,
      scope,
      last ?? new Map<string, string>(),
      lastPrimary,
    );
    const nextTop = scope === null ? new Map<Address, Address>() : topOf;
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
        ...slotRange(o.source, slot, entries, events, clock()),
        // A partial pass settles the names it read: its scope and the state's names (a name
        // registered since the last pass is in the state, not yet in the scope).
        settle: confirmedFeed
          ? feed.settle(
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
    nfts.attach(subs, abort.signal);
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
      nfts.detach();
    };
  }

  return {
    scanOnce,
    scanNames,
    /** The NFT token accounts followed live: subscribed and acknowledged by the RPC. */
    watchedNfts(): Address[] {
      return nfts.live();
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
                await feed
                  .announce(heard, heardNames)
                  .catch((e) => o.log.warn({ err: e, source: o.source.id }, "SNS confirmed pass failed"));
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
