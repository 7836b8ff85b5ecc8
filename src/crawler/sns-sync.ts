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
import { applyRange } from "./apply-range.js";
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
  /** At most this many tokenized names' NFTs followed live (`accountSubscribe`); the rest wait for the poll. Default 1,000. */
  maxWatchedNfts?: number;
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
 * "NFT transfers"): one `accountSubscribe` each, 100 to a WebSocket (kit's channel pool).
 */
export const MAX_WATCHED_NFTS = 1000;

const digestOf = (d: SnsDomainState) => JSON.stringify([d.name, d.owner, d.records]);

/**
 * The Solana Name Service source (docs/sns.md): each pass reads the SNS programs' accounts with
 * `getProgramAccounts` (paged by parent: the `.sol` root's children, then each domain's own),
 * folds them into each name's state (providers/sns/sns-state.ts), and journals, at the pass's
 * slot, the full state of every name that changed since the last pass (Solana gives states, not
 * events). A name account's address is its token id and the journal's `contract` (provenance),
 * the slot its block. Passes repeat on every `programNotification` of the name service (its
 * WebSocket) or every `pollIntervalMs`. A restart compares the first pass with the map instead of
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
      (async () => {
        const it = await client
          .accountNotifications(account, { commitment: "finalized", encoding: "base64" })
          .subscribe({ abortSignal: both });
        entry.live = true;
        for await (const n of it) {
          head = Math.max(head ?? 0, Number(n.context.slot));
          pendingNames.add(name);
          wake?.();
        }
      })().catch((e) => {
        if (both.aborted) return;
        o.log.warn({ err: e, source: o.source.id, account }, "SNS NFT subscription lost; polling");
        if (watched.get(account) === entry) watched.delete(account);
      });
    }
  }

  /** Journals what changed since the last pass: every name, or (`scope`) those token ids and the state's names. */
  async function journal(
    slot: number,
    state: ReturnType<typeof snsStateOf>,
    partial: { keys: Address[]; tokens: Set<string> } | null,
  ): Promise<SnsScanStats> {
    const previous = last ?? new Map<string, string>();
    const scope = partial?.tokens ?? null;
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
    const nextTop = scope === null ? new Map<Address, Address>() : topOf;
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
    Promise.all([
      follow(SNS_PROGRAMS.nameService, [], true),
      follow(SNS_PROGRAMS.nameOffers, [{ dataSize: 33n }], false),
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
            const touched = pending;
            const names = [...pendingNames];
            // Woken by notifications: re-read only the names they touch; else (the poll) every account.
            if (notified && touched !== null && touched.length + names.length > 0) {
              pending = [];
              pendingNames.clear();
              await scanNames(touched, names);
            } else await scanOnce();
          } catch (e) {
            passError = (e as Error).message;
            updatedAt = clock();
            o.log.warn({ err: e, source: o.source.id }, "SNS pass failed; retrying");
          }
          if (stopped) break;
          if (pending === null || pending.length > 0 || pendingNames.size > 0) {
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
