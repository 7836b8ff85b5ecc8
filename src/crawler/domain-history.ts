import type { EventOrigin, Provenance } from "../domain/history.js";
import type { Domain, DomainWithRecords, ReverseRecord } from "../domain/types.js";
import { matchesFilter } from "../domain/types.js";
import { computeBaseSignals, replayContext } from "../scoring/base-signals.js";
import type { JournalBound, JournalEntry } from "../store/crawler-log.port.js";
import type { DomainHistory, MapView } from "../store/domain-history.port.js";
import type { DomainMap } from "../store/domain-map.port.js";
import { domainWriteOf, type FoldReader, foldKeys } from "./fold-keys.js";
import {
  boundOf,
  createCoverage,
  type HistoryLog,
  type IndexedSource,
  indexedSources,
  indexPosition,
  originOf,
} from "./history-sources.js";
import { isReverseKey, type ProjectedDomain, recordEventOf, reverseKey } from "./projection.js";

const ALL: JournalBound = { block: Number.MAX_SAFE_INTEGER };

/** No lists: the base rules that need none (records, provider weight, name shape) still apply. */
const NEUTRAL = replayContext({
  provider: "NAMESPACE_A",
  network: "POLYGON",
  name: "",
  sld: "",
  tld: "",
  owner: "",
  registeredAt: null,
  expiresAt: null,
  tags: [],
  kyc: false,
});

/**
 * The map's history from the crawler's journal (the DomainHistory port): a view of the map at a
 * block or a time, folded by the crawler's own projection (fold-keys.ts) from the journal entries
 * up to that point, and the provenance of answers. Scoring of a past domain: the current base
 * rules over its past name, owner and records, with the index-wide facts (collision, TLD origin,
 * lookalike, blocklist, KYC) the last rescoring found for the token now (none when it no longer
 * exists); the caller's ranking then applies the project's current rules at the time asked for.
 *
 * @example const history = createDomainHistory(store); await history.viewAt(at, {}, Date.now());
 */
export function createDomainHistory(store: {
  crawlerLog: HistoryLog;
  domainMap: Pick<DomainMap, "findDomainByToken">;
}): DomainHistory {
  const coverage = createCoverage(store.crawlerLog);
  const readerOf = (bound: JournalBound, seen?: Map<string, JournalEntry>): FoldReader => ({
    async journalOf(sourceId, keys) {
      const entries = await store.crawlerLog.findJournalUpTo(sourceId, keys, bound);
      if (seen) for (const e of entries) seen.set(entryKey(e.tokenId, e.blockNumber, e.logIndex), e);
      return entries;
    },
    findDomainByToken: (network, provider, tokenId) =>
      store.domainMap.findDomainByToken(network, provider, tokenId),
  });

  return {
    async viewAt(at, filter, now) {
      const bound = boundOf(at);
      const covered = await coverage(at, filter, now);
      let time = at.kind === "time" ? at.time : null;
      if (at.kind === "block") {
        // The block's own time is not in the index: the time of its source's last event at or before it.
        for (const s of covered) {
          const t = await store.crawlerLog.findJournalTimeAt(s.source.id, at.block);
          if (t !== null) time = Math.max(time ?? 0, t * 1000);
        }
      }
      return { view: createView(covered, bound, readerOf(bound), store), time: time ?? now };
    },

    async provenanceOf(domains, at, now) {
      const sources = indexedSources(await store.crawlerLog.listCheckpoints());
      const leases = new Map((await store.crawlerLog.listSourceLeases()).map((l) => [l.sourceId, l]));
      const seen = new Map<string, JournalEntry>();
      const reader = readerOf(at === null ? ALL : boundOf(at), seen);
      const out: Provenance[] = [];
      for (const d of domains) {
        const s = sources.find((x) => x.source.network === d.network && x.source.provider === d.provider);
        if (!s) {
          out.push({ owner: null, records: recordsWithout(d), asOf: null });
          continue;
        }
        const folded = await foldKeys(reader, s.source, [d.tokenId], new Map(), { trace: true });
        const trace = folded.traces.get(d.tokenId);
        const state = folded.states.find((x) => x.tokenId === d.tokenId);
        const originAt = (e: { blockNumber: number; logIndex: number } | null): EventOrigin | null => {
          const entry = e && seen.get(entryKey(d.tokenId, e.blockNumber, e.logIndex));
          return entry ? originOf(entry) : null;
        };
        const records: Record<string, EventOrigin | null> = {};
        for (const r of (d as Partial<DomainWithRecords>).records ?? [])
          records[r.key] = state && trace ? originAt(recordEventOf(state, trace, r.nativeKey)) : null;
        out.push({
          owner: trace ? originAt(trace.owner) : null,
          records,
          asOf: indexPosition(s.checkpoint, leases.get(s.source.id), now),
        });
      }
      return out;
    },
  };
}

const entryKey = (tokenId: string | null, block: number, logIndex: number) =>
  `${tokenId}|${block}|${logIndex}`;

function recordsWithout(d: Domain): Record<string, null> {
  const out: Record<string, null> = {};
  for (const r of (d as Partial<DomainWithRecords>).records ?? []) out[r.key] = null;
  return out;
}

/** The map at one point: the reads resolution makes, answered by folding the covered sources' journals. */
function createView(
  covered: IndexedSource[],
  bound: JournalBound,
  reader: FoldReader,
  store: {
    crawlerLog: Pick<HistoryLog, "findJournalKeysMentioning">;
    domainMap: Pick<DomainMap, "findDomainByToken">;
  },
): MapView {
  const byId = new Map<number, DomainWithRecords>();
  const byToken = new Map<string, DomainWithRecords>();
  let nextId = -1;

  // A projected domain as the store would hold it; its id is the token's current one, if any.
  async function domainOf(s: IndexedSource, p: ProjectedDomain): Promise<DomainWithRecords> {
    const key = `${s.source.id}|${p.tokenId}`;
    const known = byToken.get(key);
    if (known) return known;
    const current = await store.domainMap.findDomainByToken(s.source.network, s.source.provider, p.tokenId);
    const base = domainWriteOf(s.source, p);
    const signals = computeBaseSignals(base, p.records, current ? replayContext(current) : NEUTRAL);
    const d: DomainWithRecords = {
      id: current?.id ?? nextId--,
      ...base,
      baseScore: signals.baseScore,
      spam: signals.spam,
      csamOk: current ? current.csamOk : signals.csamOk,
      kyc: signals.kyc,
      tags: signals.tags,
      records: p.records,
    };
    byToken.set(key, d);
    byId.set(d.id, d);
    return d;
  }

  async function fold(s: IndexedSource, keys: string[]): Promise<DomainWithRecords[]> {
    const folded = await foldKeys(reader, s.source, keys);
    const out: DomainWithRecords[] = [];
    for (const p of folded.projected) out.push(await domainOf(s, p));
    return out;
  }

  return {
    async findDomainsByName(names, filter) {
      const out: DomainWithRecords[] = [];
      for (const s of covered) {
        if (!matchesFilter(s.source, filter)) continue;
        const tokens = new Set<string>();
        for (const n of names) {
          try {
            tokens.add(s.source.adapter.tokenIdOf(n));
          } catch {
            // a name this protocol cannot hash is none of its domains
          }
        }
        if (tokens.size === 0) continue;
        for (const d of await fold(s, [...tokens])) if (names.includes(d.name)) out.push(d);
      }
      return out;
    },

    async findDomainsByOwner(address, filter) {
      const out: DomainWithRecords[] = [];
      for (const s of covered) {
        if (!matchesFilter(s.source, filter)) continue;
        for (const d of await fold(s, await candidatesOf(s, address))) if (d.owner === address) out.push(d);
      }
      return out;
    },

    async findReverse(address, filter) {
      const out: ReverseRecord[] = [];
      for (const s of covered) {
        if (!matchesFilter(s.source, filter)) continue;
        const folded = await foldKeys(reader, s.source, [reverseKey(address)]);
        const target = folded.reverseTargets.get(address) ?? null;
        if (target === null) continue;
        // A claim naming a domain that did not exist then is not served (as reproject does).
        const [d] = await fold(s, [target]);
        if (d) out.push({ network: s.source.network, provider: s.source.provider, address, domainId: d.id });
      }
      return out;
    },

    async findDomainById(id) {
      return byId.get(id) ?? null;
    },

    async findRecords(id) {
      return byId.get(id)?.records ?? [];
    },
  };

  // The tokens whose journal names the address up to the point: every token it can have owned then.
  async function candidatesOf(s: IndexedSource, address: string): Promise<string[]> {
    const keys = await store.crawlerLog.findJournalKeysMentioning(s.source.id, address, bound);
    return keys.filter((k) => !isReverseKey(k));
  }
}
