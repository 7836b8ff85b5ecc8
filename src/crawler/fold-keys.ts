import type { Domain, DomainRecord, DomainWrite } from "../domain/types.js";
import type { JournalEntry } from "../store/crawler-log.port.js";
import type { CrawlerSource } from "./crawler-source.js";
import type { FoldTrace } from "./fold-trace.js";
import { pushEventsOf } from "./journal-entries.js";
import type { JournalEvent } from "./journal-event.js";
import {
  type DataIssue,
  foldReverse,
  foldToken,
  isDomainState,
  isReverseKey,
  normalizeFor,
  type ProjectedDomain,
  projectDomain,
  reverseKey,
  reverseKeyAddress,
  type TokenState,
} from "./projection.js";

/**
 * Where the fold reads the journal and parent names from: the crawler's transaction (the whole
 * journal), or the API's time travel (the journal up to a block or a time).
 */
export interface FoldReader {
  /** The source's journal entries of these fold keys, grouped by key, each group in chain order. */
  journalOf(sourceId: string, keys: string[]): Promise<JournalEntry[]>;
  findDomainByToken(
    network: Domain["network"],
    provider: Domain["provider"],
    tokenId: string,
  ): Promise<Domain | null>;
}

export interface FoldedKeys {
  /** The domains among the keys, as the store would hold them (parents before their children). */
  projected: ProjectedDomain[];
  /** The folded states of `projected`, in the same order. */
  states: TokenState[];
  /** Token keys that are not domains (never minted, burned, reverse nodes, bookkeeping). */
  dead: string[];
  /** Per address whose reverse claims were folded: the token its primary name points at, or null. */
  reverseTargets: Map<string, string | null>;
  /** Every event read, per fold key, in chain order. */
  events: Map<string, JournalEvent[]>;
  /** The fold's trace per projected token, when `trace` was asked. */
  traces: Map<string, FoldTrace>;
  issues: DataIssue[];
}

/**
 * Folds the journal of `keys` (token ids and `reverse:<address>` keys) into domains and reverse
 * targets: the one projection of the journal, shared by the crawler (reproject.ts, which writes the
 * result) and time travel (which serves it). Pure but for the reader's I/O.
 */
export async function foldKeys(
  reader: FoldReader,
  source: CrawlerSource,
  keys: Iterable<string>,
  /** Complete, chain-ordered event lists already at hand (applyRange), not read again. */
  known: ReadonlyMap<string, JournalEvent[]> = new Map(),
  opts: { trace?: boolean } = {},
): Promise<FoldedKeys> {
  const requested = [...new Set(keys)];
  const byKey = new Map<string, JournalEvent[]>(known);
  const out: FoldedKeys = {
    projected: [],
    states: [],
    dead: [],
    reverseTargets: new Map(),
    events: byKey,
    traces: new Map(),
    issues: [],
  };
  if (requested.length === 0) return out;
  const load = async (list: string[]) => {
    const fresh = list.filter((k) => !byKey.has(k));
    for (const k of fresh) byKey.set(k, []);
    if (fresh.length === 0) return;
    for (const entry of await reader.journalOf(source.id, fresh)) {
      const list = byKey.get(entry.tokenId as string);
      if (list) pushEventsOf(entry, list);
    }
  };
  await load(requested);

  const { adapter } = source;
  const tree = adapter.tree ?? {};
  const states = requested
    .filter((k) => !isReverseKey(k))
    .map((k) => {
      if (!opts.trace) return foldToken(k, byKey.get(k) ?? [], tree);
      const trace: FoldTrace = { owner: null, natives: new Map() };
      out.traces.set(k, trace);
      return foldToken(k, byKey.get(k) ?? [], tree, trace);
    });
  // Where the protocol keeps primary names on an address's reverse node (a token), a change there
  // re-projects the address, and an address's projection reads its reverse node.
  const reverseKeys = new Set(requested.filter(isReverseKey));
  for (const s of states) if (s.reverseOf !== null) reverseKeys.add(reverseKey(s.reverseOf));
  const nodeOf = tree.reverseNodeOf;
  await load([...reverseKeys, ...(nodeOf ? [...reverseKeys].map((k) => nodeOf(reverseKeyAddress(k))) : [])]);

  const live = states.filter((s) => isDomainState(s, tree));
  out.dead = states.filter((s) => !isDomainState(s, tree)).map((s) => s.tokenId);

  // Nodes named only by a `subnode` event take their parent's name: from this batch when it is in
  // it (parents first), else from the store.
  const names = new Map<string, string>();
  const parents = new Set(live.flatMap((s) => (s.name === null && s.parentTokenId ? [s.parentTokenId] : [])));
  const inBatch = new Set(live.map((s) => s.tokenId));
  for (const p of parents) {
    if (inBatch.has(p)) continue;
    const d = await reader.findDomainByToken(source.network, source.provider, p);
    if (d) names.set(p, d.name);
  }
  for (const s of parentsFirst(live)) {
    const p = projectDomain(s, adapter, (id) => names.get(id) ?? null, out.issues);
    names.set(p.tokenId, p.name);
    out.projected.push(p);
    out.states.push(s);
  }

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
      else out.issues.push({ reason: "reverse-name", tokenId: k, detail: n.reason });
    }
    out.reverseTargets.set(address, tokenId);
  }
  return out;
}

/**
 * A projected domain of `source` as the store holds it, with neutral scoring fields (the caller
 * scores it) and its records: one literal of one shape, which the crawler scores in place.
 */
export function domainWriteOf(
  source: Pick<CrawlerSource, "provider" | "network">,
  p: ProjectedDomain,
): DomainWrite & { records: DomainRecord[] } {
  return {
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
    records: p.records,
  };
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
