import { type Address, createSolanaRpcSubscriptions } from "@solana/kit";
import type { Logger } from "pino";
import type { DomainEvent } from "../providers/provider.js";
import { addressOf, RECORDS_V2_CLASS, SNS_PROGRAMS, tokenizedMintOf } from "../providers/sns/sns-program.js";
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
}

export interface SnsScanStats {
  slot: number;
  domains: number;
  changed: number;
  released: number;
  primaries: number;
  issues: SnsIssue[];
}

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
    for await (const page of o.store.iterateDomains(1000))
      for (const d of page) {
        if (d.provider !== o.source.provider || d.network !== o.source.network) continue;
        const natives = new Map<string, string>();
        for (const r of d.records) natives.set(r.nativeKey, r.nativeValue);
        const records = [...natives].sort(
          (a, b) => SNS_RECORDS.indexOf(a[0] as SnsRecord) - SNS_RECORDS.indexOf(b[0] as SnsRecord),
        );
        out.set(d.tokenId, JSON.stringify([d.name, d.owner, records]));
      }
    return out;
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
    for (const n of nftRecords) {
      // NFT record: tag, nonce, name account (2..34), owner, mint. Active records only (tag 2).
      if (n.data[0] !== 2) continue;
      const domain = addressOf(n.data.subarray(2, 34));
      nftHolders.set(domain, await reader.nftHolder(tokenizedMintOf(domain)));
    }
    return { slot, domains, reverses, recordsV2, children, primaries, nftHolders };
  }

  /** One pass: read, fold, journal what changed. */
  async function scanOnce(): Promise<SnsScanStats> {
    if (last === null) last = await loadLast();
    const snap = await snapshot();
    const state = snsStateOf(snap);
    const entries: JournalEntry[] = [];
    const events: DomainEvent[][] = [];
    const blockHash = `slot:${snap.slot}`;
    // The slot's time as the source saw it read (seconds): the devnet's endpoint has no getBlockTime.
    const blockTime = Math.floor(clock() / 1000);
    const push = (contract: string, tokenId: string, list: DomainEvent[]) => {
      entries.push({
        sourceId: o.source.id,
        chainId: o.source.chainId,
        blockNumber: snap.slot,
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
    let changed = 0;
    for (const d of state.domains) {
      const tokenId = snsTokenId(d.key);
      const digest = digestOf(d);
      next.set(tokenId, digest);
      if (last.get(tokenId) === digest) continue;
      changed++;
      push(d.key, tokenId, snsEventsOf(d.key, d));
    }
    let released = 0;
    for (const tokenId of last.keys()) {
      if (next.has(tokenId)) continue;
      released++;
      const key = addressOf(Buffer.from(tokenId.slice(2), "hex"));
      push(key, tokenId, snsEventsOf(key, null));
    }
    const primary = new Map<string, string>();
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
          blockNumber: snap.slot,
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
    head = Math.max(head ?? 0, snap.slot);
    synced = snap.slot;
    eventsApplied += entries.length;
    passes++;
    passError = null;
    updatedAt = clock();
    return {
      slot: snap.slot,
      domains: state.domains.length,
      changed,
      released,
      primaries: primary.size,
      issues: state.issues,
    };
  }

  /** Wakes the loop on the name service's program notifications; returns the unsubscriber. */
  function subscribe(): () => void {
    if (!o.wsUrl) return () => {};
    const abort = new AbortController();
    const subs = createSolanaRpcSubscriptions(o.wsUrl);
    void (async () => {
      for (const program of [SNS_PROGRAMS.nameService] as const) {
        const it = await subs
          .programNotifications(program, { commitment: "finalized", encoding: "base64" })
          .subscribe({ abortSignal: abort.signal });
        for await (const n of it) {
          head = Math.max(head ?? 0, Number(n.context.slot));
          wake?.();
        }
      }
    })().catch((e) => {
      if (!abort.signal.aborted)
        o.log.warn({ err: e, source: o.source.id }, "SNS subscription lost; polling");
    });
    return () => abort.abort();
  }

  return {
    scanOnce,
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
        while (!stopped) {
          try {
            await scanOnce();
          } catch (e) {
            passError = (e as Error).message;
            updatedAt = clock();
            o.log.warn({ err: e, source: o.source.id }, "SNS pass failed; retrying");
          }
          if (stopped) break;
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, o.pollIntervalMs ?? 2000);
            wake = () => {
              clearTimeout(t);
              resolve();
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
