import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { DomainRecord, DomainWrite } from "../domain/types.js";
import type { DomainEvent, ProviderAdapter, SourceContracts } from "../providers/provider.js";
import type { Checkpoint, JournalEntry, RecentBlock } from "../store/crawler-log.port.js";
import type { Store } from "../store/store.js";
import type { FetchedLog, PreDecoded } from "./log-batch.js";
import { reverseNode } from "../providers/namehash.js";
import {
  type DataIssue,
  foldKeyOf,
  foldReverse,
  foldToken,
  isDomainState,
  isReverseKey,
  type JournalEvent,
  normalizeFor,
  type ProjectedDomain,
  projectDomain,
  reverseKey,
  reverseKeyAddress,
  type TokenState,
} from "./projection.js";

/** One crawled (provider, network) pair: where to read, what to read, how to decode it. */
export interface CrawlerSource {
  /** Stable id of the checkpoint and journal rows, e.g. `uns-polygon`. */
  id: string;
  provider: Provider;
  network: Network;
  chainId: number;
  adapter: ProviderAdapter;
  contracts: SourceContracts;
  rpcUrl: string;
  /** Start block unknown (FNS mainnet, docs/chain-facts.md): find the deployment by bisecting eth_getCode. */
  discoverStartBlock?: boolean;
}

/** The scoring fields written with a domain (src/scoring's computeBaseSignals plugs in here). */
export type SignalsFn = (
  domain: DomainWrite,
  records: readonly DomainRecord[],
) => Pick<DomainWrite, "baseScore" | "spam" | "csamOk" | "kyc" | "tags">;

/** Until a scoring function is wired in: a neutral score (a name that failed normalization is spam, see reproject). */
export const defaultSignals: SignalsFn = () => ({
  baseScore: 50,
  spam: false,
  csamOk: true,
  kyc: false,
  tags: [],
});

export interface DecodeIssue {
  reason: string;
  blockNumber: number;
  logIndex: number;
  address: string;
}

/**
 * Decodes fetched logs into journal entries: one entry per log and fold key, its events as a JSON
 * array. A log the adapter refuses (unknown topic, malformed, token-id mismatch, bad name) is
 * reported and skipped, never fatal.
 */
export function journalEntriesOf(
  source: CrawlerSource,
  logs: readonly FetchedLog[],
  blockTimes: ReadonlyMap<number, number>,
  issues: DecodeIssue[],
): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (const log of logs) {
    let result: PreDecoded | ReturnType<ProviderAdapter["decode"]>;
    if (log.decoded) result = log.decoded;
    else {
      try {
        result = source.adapter.decode(log, source.contracts);
      } catch (e) {
        result = { ok: false, reason: `decoder threw: ${(e as Error).message}` };
      }
    }
    if (!result.ok) {
      issues.push({
        reason: result.reason,
        blockNumber: log.blockNumber,
        logIndex: log.logIndex,
        address: log.address,
      });
      continue;
    }
    const { events } = result;
    if (events.length === 0) continue;
    const blockTime = log.blockTime ?? blockTimes.get(log.blockNumber) ?? null;
    const json = "json" in result ? result.json : null;
    // Nearly every log is one event, or events of one token: one row, no grouping, and the JSON
    // the decode worker already wrote.
    const key = foldKeyOf(events[0]);
    if (events.length === 1 || events.every((ev) => foldKeyOf(ev) === key)) {
      out.push(entryOf(source, log, key, events, json ?? JSON.stringify(events), blockTime));
      continue;
    }
    const byKey = new Map<string, DomainEvent[]>();
    for (const ev of events) {
      const k = foldKeyOf(ev);
      const list = byKey.get(k);
      if (list) list.push(ev);
      else byKey.set(k, [ev]);
    }
    // One row per log and token: a log may concern several tokens (ERC-1155 TransferBatch).
    for (const [k, list] of byKey) out.push(entryOf(source, log, k, list, JSON.stringify(list), blockTime));
  }
  return out;
}

function entryOf(
  source: CrawlerSource,
  log: FetchedLog,
  tokenId: string,
  events: DomainEvent[],
  json: string,
  blockTime: number | null,
): JournalEntry {
  const entry: JournalEntry = {
    sourceId: source.id,
    chainId: log.chainId,
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
    logIndex: log.logIndex,
    txHash: log.transactionHash,
    contract: log.address,
    tokenId,
    event: json,
    blockTime,
  };
  decoded.set(entry, events);
  return entry;
}

// The events of entries decoded in this process, so that applying a range does not parse back the
// JSON it has just written.
const decoded = new WeakMap<JournalEntry, DomainEvent[]>();

/** Appends the events of a journal entry, at its place on the chain, to `out`. */
function pushEventsOf(entry: JournalEntry, out: JournalEvent[]): void {
  const parsed = decoded.get(entry) ?? (JSON.parse(entry.event) as DomainEvent | DomainEvent[]);
  const blockTime = entry.blockTime ?? null;
  const push = (event: DomainEvent) =>
    out.push({
      event,
      blockNumber: entry.blockNumber,
      logIndex: entry.logIndex,
      blockTime,
      contract: entry.contract,
    });
  if (Array.isArray(parsed)) for (const event of parsed) push(event);
  else push(parsed);
}

export interface ReprojectStats {
  domainsWritten: number;
  domainsDeleted: number;
  reverseWritten: number;
  issues: DataIssue[];
}

/**
 * Recomputes the domains (and reverse claims) of `keys` from the source's whole journal and writes
 * them. The same code serves a new range, a crash resume and a reorg replay: the journal is the
 * truth and the domain tables are its projection. Must run inside the caller's transaction.
 */
export async function reproject(
  tx: Store,
  source: CrawlerSource,
  keys: Iterable<string>,
  signals: SignalsFn = defaultSignals,
  /** Complete, chain-ordered event lists already at hand (applyRange), not read again. */
  known: ReadonlyMap<string, JournalEvent[]> = new Map(),
): Promise<ReprojectStats> {
  const requested = [...new Set(keys)];
  const stats: ReprojectStats = { domainsWritten: 0, domainsDeleted: 0, reverseWritten: 0, issues: [] };
  if (requested.length === 0) return stats;
  const byKey = new Map<string, JournalEvent[]>(known);
  const load = async (list: string[]) => {
    const fresh = list.filter((k) => !byKey.has(k));
    for (const k of fresh) byKey.set(k, []);
    if (fresh.length === 0) return;
    for (const entry of await tx.findJournalByTokens(source.id, fresh)) {
      const list = byKey.get(entry.tokenId as string);
      if (list) pushEventsOf(entry, list);
    }
  };
  await load(requested);

  const states = requested.filter((k) => !isReverseKey(k)).map((k) => foldToken(k, byKey.get(k) ?? []));
  // ENS primary names live on the address's reverse node (a token): a change there re-projects
  // the address, and an address's projection reads its reverse node.
  const reverseKeys = new Set(requested.filter(isReverseKey));
  for (const s of states) if (s.reverseOf !== null) reverseKeys.add(reverseKey(s.reverseOf));
  const ens = source.adapter.protocol === "ENS";
  const nodeOf = (address: string) => reverseNode(address) as string;
  await load([...reverseKeys, ...(ens ? [...reverseKeys].map((k) => nodeOf(reverseKeyAddress(k))) : [])]);

  const ctx = { provider: source.provider, network: source.network, mapRecord: source.adapter.mapRecord };
  const live = states.filter(isDomainState);
  const dead = states.filter((s) => !isDomainState(s)).map((s) => s.tokenId);

  // ENS nodes named only by NewOwner take their parent's name: from this batch when it is in it
  // (parents first), else from the store.
  const names = new Map<string, string>();
  const parents = new Set(live.flatMap((s) => (s.name === null && s.parentTokenId ? [s.parentTokenId] : [])));
  const inBatch = new Set(live.map((s) => s.tokenId));
  for (const p of parents) {
    if (inBatch.has(p)) continue;
    const d = await tx.findDomainByToken(source.network, source.provider, p);
    if (d) names.set(p, d.name);
  }
  const projected: ProjectedDomain[] = [];
  for (const s of parentsFirst(live)) {
    const p = projectDomain(s, ctx, (id) => names.get(id) ?? null, stats.issues);
    names.set(p.tokenId, p.name);
    projected.push(p);
  }

  const writes: DomainWrite[] = projected.map((p) => {
    const d: DomainWrite = {
      provider: source.provider,
      network: source.network,
      tokenId: p.tokenId,
      name: p.name,
      sld: p.sld,
      tld: p.tld,
      owner: p.owner,
      contractAddress: p.contractAddress,
      resolver: p.resolver,
      registeredAt: p.registeredAt,
      registeredBlock: p.registeredBlock,
      expiresAt: p.expiresAt,
      lastUpdateBlock: p.lastUpdateBlock,
      lastUpdateAt: p.lastUpdateAt,
      baseScore: 50,
      spam: false,
      csamOk: true,
      kyc: false,
      tags: [],
    };
    // A name that failed normalization is stored under its placeholder; the scoring rules judge
    // the stored name, exactly as a later rescoring will, so the two never disagree.
    return { ...d, ...signals(d, p.records) };
  });
  const ids = await tx.upsertDomains(writes);
  await tx.replaceRecordsMany(ids.map((domainId, i) => ({ domainId, records: projected[i].records })));
  stats.domainsWritten = ids.length;

  if (dead.length > 0) {
    const existing = await tx.findDomainIdsByTokens(source.network, source.provider, dead);
    for (const id of existing.values()) await tx.deleteDomain(id);
    stats.domainsDeleted = existing.size;
  }

  if (reverseKeys.size > 0) {
    const targets = new Map<string, string | null>();
    for (const k of reverseKeys) {
      const address = reverseKeyAddress(k);
      const nodeName = ens ? foldToken(nodeOf(address), byKey.get(nodeOf(address)) ?? []).nodeName : null;
      const r = foldReverse(byKey.get(k) ?? [], nodeName);
      let tokenId: string | null = null;
      if (r && "tokenId" in r) tokenId = r.tokenId;
      else if (r) {
        const n = normalizeFor(source.provider, r.name);
        if (n.ok) tokenId = source.adapter.tokenIdOf(n.value.name);
        else stats.issues.push({ reason: "reverse-name", tokenId: k, detail: n.reason });
      }
      targets.set(address, tokenId);
    }
    const wanted = [...new Set([...targets.values()].filter((t): t is string => t !== null))];
    const idOf = await tx.findDomainIdsByTokens(source.network, source.provider, wanted);
    for (const [address, tokenId] of targets) {
      const domainId = tokenId === null ? undefined : idOf.get(tokenId);
      // A claim naming a domain not indexed (yet) stays in the journal; it is not served.
      if (domainId === undefined) await tx.removeReverse(address, source.network, source.provider);
      else {
        await tx.setReverse({ network: source.network, provider: source.provider, address, domainId });
        stats.reverseWritten++;
      }
    }
  }
  return stats;
}

/** Orders states so that a parent named in the batch comes before the children named after it. */
function parentsFirst(states: TokenState[]): TokenState[] {
  const pending = new Map(states.map((s) => [s.tokenId, s]));
  const out: TokenState[] = [];
  const visit = (s: TokenState) => {
    if (!pending.delete(s.tokenId)) return;
    const parent = s.name === null && s.parentTokenId ? pending.get(s.parentTokenId) : undefined;
    if (parent) visit(parent);
    out.push(s);
  };
  for (const s of states) visit(s);
  return out;
}

export interface RangeWrite {
  entries: JournalEntry[];
  checkpoint: Checkpoint;
  recentBlocks: RecentBlock[];
  /** Recent blocks below this number are pruned. */
  pruneBelow: number;
}

/** A range's journal entries, their projection and the checkpoint: one transaction. */
export async function applyRange(
  store: Store,
  source: CrawlerSource,
  write: RangeWrite,
  signals?: SignalsFn,
): Promise<ReprojectStats & { inserted: number }> {
  return store.transaction(async (tx) => {
    // The tokens' earlier events, read before this range is appended, followed by the range's own:
    // in a backfill most tokens are new and nothing is read back.
    const known = new Map<string, JournalEvent[]>();
    for (const e of write.entries) if (!known.has(e.tokenId as string)) known.set(e.tokenId as string, []);
    const keys = [...known.keys()];
    const seen = new Set<string>();
    for (const e of await tx.findJournalByTokens(source.id, keys)) {
      seen.add(`${e.blockHash}:${e.logIndex}:${e.tokenId}`);
      const list = known.get(e.tokenId as string);
      if (list) pushEventsOf(e, list);
    }
    for (const e of write.entries) {
      // An entry already in the journal (a range applied again) is folded once, from the journal.
      if (seen.size > 0 && seen.has(`${e.blockHash}:${e.logIndex}:${e.tokenId}`)) continue;
      pushEventsOf(e, known.get(e.tokenId as string) as JournalEvent[]);
    }
    const inserted = await tx.appendJournal(write.entries);
    const stats = await reproject(tx, source, keys, signals, known);
    if (write.recentBlocks.length > 0) await tx.putRecentBlocks(source.id, write.recentBlocks);
    await tx.deleteRecentBlocks(source.id, { below: write.pruneBelow });
    await tx.setCheckpoint(write.checkpoint);
    return { ...stats, inserted };
  });
}

/**
 * Undoes everything above `ancestor`: deletes the orphaned journal entries and recent blocks,
 * replays the tokens they touched from the remaining journal, and moves the checkpoint back.
 */
export async function rollbackTo(
  store: Store,
  source: CrawlerSource,
  ancestor: { blockNumber: number; blockHash: string },
  state: string,
  now: number,
  signals?: SignalsFn,
): Promise<ReprojectStats & { entriesDeleted: number; tokens: number }> {
  return store.transaction(async (tx) => {
    const keys = await tx.findJournalTokensAfter(source.id, ancestor.blockNumber);
    const entriesDeleted = await tx.deleteJournalAfter(source.id, ancestor.blockNumber);
    await tx.deleteRecentBlocks(source.id, { above: ancestor.blockNumber });
    const stats = await reproject(tx, source, keys, signals);
    await tx.setCheckpoint({
      sourceId: source.id,
      chainId: source.chainId,
      blockNumber: ancestor.blockNumber,
      blockHash: ancestor.blockHash,
      updatedAt: now,
      state,
      error: null,
    });
    return { ...stats, entriesDeleted, tokens: keys.length };
  });
}
