import { namehash } from "viem/ens";
import { ZERO_ADDRESS } from "../domain/address.js";
import { splitName } from "../domain/names.js";
import type { DomainFilter, DomainWithRecords } from "../domain/types.js";
import type { DomainMap } from "../store/domain-map.port.js";
import type { LiveOrigin } from "../domain/history.js";
import type { EnsLive } from "./ens-live.js";
import type { LiveAnswer } from "./ens-live-cache.js";

/** The ENS namespace and the one network it lives on. */
const ENS = { provider: "NAMESPACE_C", network: "ETHEREUM" } as const;

/**
 * Which ENS names the index cannot answer, and their answers, decided from the map alone: a
 * domain whose resolver is not a storage resolver is answered by that resolver (offchain), and a
 * name without a domain of its own under an ancestor whose resolver is extended (ENSIP-10) is
 * answered by the ancestor's resolver (wildcard). Indexed names pass through untouched.
 *
 * @example
 * const names = createLiveNames({ live, store });
 * const candidates = await names.withLiveRecords(await store.domainMap.findDomainsByName(["offchain.eth"], {}));
 */
export interface LiveNames {
  /**
   * The candidates, each ENS domain under a non-storage resolver with its live records; with
   * `resolve` false (the project turned live lookups off), with the map's records alone, tagged
   * `offchain-not-resolved`.
   */
  withLiveRecords(candidates: DomainWithRecords[], resolve?: boolean): Promise<DomainWithRecords[]>;
  /** The name as its nearest ancestor's wildcard resolver answers it, or null (no such ancestor, no records). */
  wildcard(names: readonly string[], filter: DomainFilter): Promise<DomainWithRecords | null>;
  /** Whether any candidate needs a live lookup (a cheap check on the hot path). */
  needsLive(candidates: readonly DomainWithRecords[]): boolean;
}

/** Where a live answer's records came from (provenance), by the answer's domain object. */
const origins = new WeakMap<DomainWithRecords, LiveOrigin>();

/** The live origin of a domain that withLiveRecords or wildcard returned; undefined for an indexed one. */
export function liveOriginOf(d: DomainWithRecords): LiveOrigin | undefined {
  return origins.get(d);
}

/**
 * The same answer object for the same map domain and the same live answer: a warm name costs no
 * allocation, and what the API derives from a domain's identity (its serialized records) is kept.
 */
const built = new WeakMap<LiveAnswer, { from: DomainWithRecords; out: DomainWithRecords }>();
const unresolved = new WeakMap<DomainWithRecords, DomainWithRecords>();

function answerOf(
  from: DomainWithRecords,
  answer: LiveAnswer,
  kind: LiveOrigin["kind"],
  build: () => DomainWithRecords,
): DomainWithRecords {
  const memo = built.get(answer);
  if (memo !== undefined && memo.from === from) return memo.out;
  const out = build();
  origins.set(out, {
    kind,
    resolver: answer.resolver,
    gateways: answer.gateways,
    block: answer.block,
    fetchedAt: new Date(answer.fetchedAt).toISOString(),
    cacheTtlMs: answer.ttlMs,
  });
  built.set(answer, { from, out });
  return out;
}

/** The map's stamp of a domain's resolver entry: it moves with every write to the domain. */
const stampOf = (d: DomainWithRecords) => `${d.lastUpdateBlock}`;

export function createLiveNames(deps: {
  live: EnsLive;
  store: Pick<DomainMap, "findDomainsByName">;
}): LiveNames {
  const { live, store } = deps;
  const isLive = (d: DomainWithRecords) =>
    d.provider === ENS.provider && d.resolver !== null && !live.isStorageResolver(d.resolver);

  return {
    needsLive: (candidates) => candidates.some(isLive),

    async withLiveRecords(candidates, resolve = true) {
      return Promise.all(
        candidates.map(async (d) => {
          if (!isLive(d)) return d;
          if (!resolve) {
            let out = unresolved.get(d);
            if (out === undefined) {
              out = { ...d, tags: [...d.tags, "offchain-not-resolved"] };
              unresolved.set(d, out);
            }
            return out;
          }
          const answer = await live.lookup(d.name, d.resolver as string, stampOf(d));
          return answerOf(d, answer, "offchain", () => ({
            ...d,
            records: answer.records,
            tags: [...d.tags, "offchain"],
          }));
        }),
      );
    },

    async wildcard(names, filter) {
      if (
        (filter.provider && filter.provider !== ENS.provider) ||
        (filter.network && filter.network !== ENS.network)
      )
        return null;
      const name = names[names.length - 1];
      if (name === undefined) return null;
      const labels = name.split(".");
      // A wildcard answers a name below a parent of at least two labels (wild.eth, cb.id).
      if (labels.length < 3) return null;
      const ancestors: string[] = [];
      for (let i = 1; i <= labels.length - 2; i++) ancestors.push(labels.slice(i).join("."));
      const found = await store.findDomainsByName(ancestors, ENS);
      // ENSIP-10: the nearest ancestor with a resolver.
      let parent: DomainWithRecords | null = null;
      for (const a of ancestors) {
        parent = found.find((d) => d.name === a && d.resolver !== null) ?? null;
        if (parent !== null) break;
      }
      if (parent === null || parent.resolver === null || live.isStorageResolver(parent.resolver)) return null;
      if (!(await live.isExtended(parent.resolver))) return null;
      const answer = await live.lookup(name, parent.resolver, stampOf(parent));
      // No record at all: the resolver does not know the name either (ENS clients find nothing).
      if (answer.records.length === 0) return null;
      const from = parent;
      return answerOf(from, answer, "wildcard", () => ({
        ...from,
        ...splitName(name),
        // Not in the map: no id of its own (negative, never a stored id), no owner on chain.
        id: -from.id,
        name,
        owner: ZERO_ADDRESS,
        tokenId: namehash(name),
        registeredAt: null,
        registeredBlock: null,
        expiresAt: from.expiresAt,
        records: answer.records,
        tags: ["wildcard"],
      }));
    },
  };
}
