import type { DomainWithRecords, DomainWrite } from "../domain/types.js";
import type { ChangeLog } from "../store/change-log.port.js";
import type { CrawlerLog } from "../store/crawler-log.port.js";
import type { DomainMap } from "../store/domain-map.port.js";
import { type ChangeLogging, changeEventsOf, isLogged } from "./change-events.js";
import type { CrawlerSource, SignalsFn } from "./crawler-source.js";
import { pushEventsOf } from "./journal-entries.js";
import {
  type DataIssue,
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
  tx: CrawlerLog & DomainMap & ChangeLog,
  source: CrawlerSource,
  keys: Iterable<string>,
  signals: SignalsFn,
  /** Complete, chain-ordered event lists already at hand (applyRange), not read again. */
  known: ReadonlyMap<string, JournalEvent[]> = new Map(),
  /** Log the changes to the change log (change-events.ts), in this transaction. */
  logging?: ChangeLogging,
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

  const { adapter } = source;
  const tree = adapter.tree ?? {};
  const states = requested.filter((k) => !isReverseKey(k)).map((k) => foldToken(k, byKey.get(k) ?? [], tree));
  // Where the protocol keeps primary names on an address's reverse node (a token), a change there
  // re-projects the address, and an address's projection reads its reverse node.
  const reverseKeys = new Set(requested.filter(isReverseKey));
  for (const s of states) if (s.reverseOf !== null) reverseKeys.add(reverseKey(s.reverseOf));
  const nodeOf = tree.reverseNodeOf;
  await load([...reverseKeys, ...(nodeOf ? [...reverseKeys].map((k) => nodeOf(reverseKeyAddress(k))) : [])]);

  const live = states.filter((s) => isDomainState(s, tree));
  const dead = states.filter((s) => !isDomainState(s, tree)).map((s) => s.tokenId);

  // Nodes named only by a `subnode` event take their parent's name: from this batch when it is in
  // it (parents first), else from the store.
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
    const p = projectDomain(s, adapter, (id) => names.get(id) ?? null, stats.issues);
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
  // The state before, for the change log: only tokens with an earlier journal entry can have one.
  let before = new Map<string, DomainWithRecords>();
  if (logging) {
    const read = states
      .filter((s) => !logging.fresh.has(s.tokenId) && isLogged(logging, logging.positionOf(s.tokenId)))
      .map((s) => s.tokenId);
    if (read.length > 0) before = await tx.findDomainsByTokens(source.network, source.provider, read);
  }
  const ids = await tx.upsertDomains(writes);
  await tx.replaceRecordsMany(ids.map((domainId, i) => ({ domainId, records: projected[i].records })));
  stats.domainsWritten = ids.length;

  if (dead.length > 0) {
    const existing = await tx.findDomainIdsByTokens(source.network, source.provider, dead);
    for (const id of existing.values()) await tx.deleteDomain(id);
    stats.domainsDeleted = existing.size;
  }
  if (logging) {
    const written = writes.map((w, i) => ({ ...w, records: projected[i].records }));
    await tx.appendChangeEvents(changeEventsOf(source, logging, before, written, dead));
  }

  if (reverseKeys.size > 0) {
    const targets = new Map<string, string | null>();
    for (const k of reverseKeys) {
      const address = reverseKeyAddress(k);
      const node = nodeOf?.(address);
      const nodeName = node ? foldToken(node, byKey.get(node) ?? [], tree).nodeName : null;
      const r = foldReverse(byKey.get(k) ?? [], nodeName);
      let tokenId: string | null = null;
      if (r && "tokenId" in r) tokenId = r.tokenId;
      else if (r) {
        const n = normalizeFor(adapter.normalizeName, r.name);
        if (n.ok) tokenId = adapter.tokenIdOf(n.value.name);
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
