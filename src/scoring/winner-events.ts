import type { ChangeEvent, ChangeEventWrite, WinnerRef } from "../domain/change-events.js";
import type { DomainWithRecords } from "../domain/types.js";
import type { CompiledProjectRules } from "./project-rules.js";
import type { Ranker } from "./scoring-ranker.js";

/**
 * winner.changed, the pure part: which domain a colliding name resolves to under a project's
 * settings before and after a change of the map, and the event that says it changed.
 */

/** True when the settings rank every name as no settings do: such projects share one stream of winners. */
export function ranksAsDefault(r: CompiledProjectRules): boolean {
  return (
    r.allowedNetworks === null &&
    r.allowedProviders === null &&
    r.priority.size === 0 &&
    r.domainExceptions.size === 0 &&
    r.tldExceptions.size === 0 &&
    !r.includeExpired
  );
}

export const refOf = (d: DomainWithRecords | undefined): WinnerRef | null =>
  d ? { network: d.network, provider: d.provider, tokenId: d.tokenId } : null;

export const sameRef = (a: WinnerRef | null, b: WinnerRef | null): boolean =>
  a === b ||
  (a !== null &&
    b !== null &&
    a.tokenId === b.tokenId &&
    a.network === b.network &&
    a.provider === b.provider);

const isOf = (d: DomainWithRecords, e: ChangeEvent) =>
  d.tokenId === e.tokenId && d.network === e.network && d.provider === e.provider;

/** The domain a removal took away, as the ranker saw it (its ranking inputs from the event's `prior`). */
function removedDomain(e: ChangeEvent, id: number): DomainWithRecords {
  const p = e.payload.prior;
  const [sld = ""] = e.name.split(".");
  return {
    id,
    provider: e.provider,
    network: e.network,
    tokenId: e.tokenId,
    name: e.name,
    sld,
    tld: e.tld,
    owner: e.payload.owner?.from ?? "",
    contractAddress: "",
    resolver: null,
    registeredAt: p?.registeredAt ?? null,
    registeredBlock: null,
    expiresAt: p?.expiresAt ?? null,
    lastUpdateBlock: e.blockNumber,
    lastUpdateAt: e.blockTime ?? e.createdAt,
    baseScore: p?.baseScore ?? 0,
    spam: false,
    csamOk: p?.csamOk ?? true,
    kyc: false,
    tags: [],
    records: [],
  };
}

/**
 * The candidates of `name` before `events` (the map's events on it, ascending), from its
 * candidates after them: a creation undone, a removal's domain back with its prior ranking inputs,
 * an update's ranking inputs as they were, a rename undone (the domain leaves its new name and
 * comes back to its old one). Other fields do not order candidates (docs/scoring.md).
 */
export function candidatesBefore(
  name: string,
  after: DomainWithRecords[],
  events: ChangeEvent[],
  ids: { next: number } = { next: -1 },
): DomainWithRecords[] {
  let list = [...after];
  const putBack = (e: ChangeEvent) => {
    if (!list.some((d) => isOf(d, e))) list.push({ ...removedDomain(e, ids.next--), name });
  };
  for (const e of [...events].reverse()) {
    const renamed = e.payload.nameChanged;
    if (e.type === "domain.created") list = list.filter((d) => !isOf(d, e));
    else if (e.type === "domain.removed") putBack(e);
    else if (renamed && renamed.from === name) putBack(e);
    else if (renamed && e.name === name) list = list.filter((d) => !isOf(d, e));
    else if (e.type === "domain.updated") {
      const p = e.payload.prior;
      if (p) list = list.map((d) => (isOf(d, e) ? { ...d, ...p } : d));
    }
  }
  return list;
}

export interface RankScope {
  /** null: every project whose settings rank as the defaults. */
  projectId: number | null;
  settings: Record<string, unknown>;
  rules: CompiledProjectRules;
}

/** The winner of `candidates` under a scope's settings at `now` (no country: no geography rule). */
export function winnerUnder(
  ranker: Ranker,
  candidates: DomainWithRecords[],
  scope: RankScope,
  now: number,
): WinnerRef | null {
  const ranked = ranker.rank(candidates, {
    projectSettings: scope.settings,
    rules: scope.rules,
    country: null,
    now,
    explain: false,
  });
  return refOf(ranked[0]?.domain);
}

/**
 * The winner.changed event of a name: at the position of the change that moved it (`at`: the
 * last map event on the name, so that a reorg retracting that block retracts this one too), or
 * of a settings change (`at` null: no block; sourceId `settings`).
 */
export function winnerEvent(
  name: string,
  tld: string,
  from: WinnerRef | null,
  to: WinnerRef | null,
  projectId: number | null,
  at: ChangeEvent | null,
  now: number,
): ChangeEventWrite {
  const shown = (to ?? from)!;
  return {
    type: "winner.changed",
    createdAt: now,
    sourceId: at?.sourceId ?? "settings",
    network: shown.network,
    provider: shown.provider,
    tokenId: shown.tokenId,
    name,
    tld,
    blockNumber: at?.blockNumber ?? 0,
    blockHash: at?.blockHash ?? "",
    txHash: at?.txHash ?? null,
    blockTime: at?.blockTime ?? null,
    retracts: null,
    projectId,
    payload: { winner: { from, to }, cause: at ? "map" : "settings" },
  };
}
