import { normalizeWalletAddress } from "../domain/address.js";
import { AppError } from "../domain/errors.js";
import type { HistoryOptions } from "../domain/history.js";
import { MAX_LABELS, MAX_NAME_BYTES, normalizeEnsName, normalizeName } from "../domain/names.js";
import { type DomainFilter, type DomainWithRecords, matchesFilter } from "../domain/types.js";
import type { DomainHistory, MapView } from "../store/domain-history.port.js";
import type { DomainMap } from "../store/domain-map.port.js";
import type { RankContext, RankedDomain, Ranker } from "./rank.js";
import type { EnsLive } from "./ens-live.js";
import { createLiveNames, liveOriginOf } from "./live-names.js";
import { compiledRulesOf } from "../scoring/project-rules.js";

/**
 * resolve, deep-resolve and reverse-resolve over the store port and a ranker. Transport-neutral:
 * the REST API shapes the result (record-shape.ts), DNS turns it into answers.
 *
 * @example
 * const resolution = createResolution({ store, ranker: createScoringRanker() });
 * const best = await resolution.resolve("alice.wallet", {}, { projectSettings: {}, country: null, now: Date.now(), explain: false });
 */
export interface Resolution {
  /**
   * The highest-ranked domain of the name, or null. Throws INVALID_DOMAIN / PARAMETER_TOO_LONG.
   * `history`: the answer as it was at `history.at` (time travel: AT_BEFORE_INDEX,
   * AT_AFTER_INDEX), and/or each domain's `provenance`. The same for every operation.
   */
  resolve(
    domain: string,
    filter: DomainFilter,
    ctx: RankContext,
    history?: HistoryOptions,
  ): Promise<RankedDomain | null>;
  /** Every domain of the name the caller may see, best first. */
  deepResolve(
    domain: string,
    filter: DomainFilter,
    ctx: RankContext,
    history?: HistoryOptions,
  ): Promise<RankedDomain[]>;
  /**
   * Domains owned by the address plus those whose reverse record names it, forward-verified
   * ({@link forwardVerified}); primary names first, then score descending, then name ascending.
   * Throws INVALID_ADDRESS.
   */
  reverseResolve(
    address: string,
    filter: DomainFilter,
    ctx: RankContext,
    history?: HistoryOptions,
  ): Promise<RankedDomain[]>;
}

/**
 * Whether a reverse (primary) record of `address` naming `d` holds when resolved forward. ENS
 * (ENSIP-3, as ENS clients check it): the name's ETH address record must be the address, whoever
 * owns the name. FNS and UNS keep reverse records for owners only: the name must still be owned
 * by the address (a transfer leaves the old owner's record stale).
 */
export function forwardVerified(d: DomainWithRecords, address: string): boolean {
  if (d.provider === "NAMESPACE_C") {
    return d.records.find((r) => r.key === "token.ETH.0")?.value.toLowerCase() === address;
  }
  return d.owner === address;
}

/** Why a name cannot be looked up: its code, and what is wrong with it (after "The domain name "). */
export type NameRefusal =
  | { code: "PARAMETER_TOO_LONG"; problem: string }
  | { code: "INVALID_DOMAIN"; problem: string; reason: string };

/**
 * The normalized names to look a domain up under: the generic form and, when it differs and
 * succeeds, the ENSIP-15 form (ENS names are stored in their ENSIP-15 form, the others in the
 * generic one); or why there are none. API v1 checks a name with it while validating the query.
 */
export function checkName(input: string): { names: string[] } | NameRefusal {
  const fast = asciiFastPath(input);
  if (fast !== null) return { names: [fast] };
  // Refused before any normalization work: both limits are cheap to check on the raw input.
  if (input.length > MAX_NAME_BYTES || Buffer.byteLength(input, "utf8") > MAX_NAME_BYTES)
    return { code: "PARAMETER_TOO_LONG", problem: `is longer than ${MAX_NAME_BYTES} bytes` };
  if (countDots(input) >= MAX_LABELS)
    return { code: "PARAMETER_TOO_LONG", problem: `has more than ${MAX_LABELS} labels` };
  const generic = normalizeName(input);
  const ens = normalizeEnsName(input);
  // Each rule admits a few names the other refuses (`a_b.wallet` only generic, `$x.eth` only
  // ENSIP-15): a name is invalid only when both refuse it, and the generic reason is reported.
  if (!generic.ok) {
    if (ens.ok) return { names: [ens.value.name] };
    return { code: "INVALID_DOMAIN", problem: `is not valid: ${generic.reason}`, reason: generic.reason };
  }
  if (ens.ok && ens.value.name !== generic.value.name) return { names: [generic.value.name, ens.value.name] };
  return { names: [generic.value.name] };
}

/** checkName's names, or its refusal thrown as an AppError. */
export function lookupNames(input: string): string[] {
  const checked = checkName(input);
  if ("names" in checked) return checked.names;
  throw new AppError(checked.code, `The domain name ${checked.problem}.`);
}

// Plain LDH names (letters, digits, inner hyphens; no `--` anywhere, so no punycode and no ENS
// label extension) are already in both normalized forms once lower-cased: most traffic skips the
// Unicode machinery (~6 µs a name). resolution.test.ts checks the shortcut against both rules.
const LDH_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** The normalized name when the input is a plain LDH name (<= 253 characters), else null. */
export function asciiFastPath(input: string): string | null {
  if (input.length > 253 || !LDH_NAME.test(input) || input.includes("--")) return null;
  return input.toLowerCase();
}

function countDots(s: string): number {
  let n = 0;
  for (let i = s.indexOf("."); i !== -1; i = s.indexOf(".", i + 1)) n++;
  return n;
}

function first(ranked: RankedDomain[]): RankedDomain | null {
  return ranked[0] ?? null;
}

export function createResolution(deps: {
  store: DomainMap;
  ranker: Ranker;
  /** Time travel and provenance (crawler/domain-history.ts); without it both are refused. */
  history?: DomainHistory;
  /**
   * ENS names the index cannot answer (wildcard and offchain resolvers), looked up live
   * (ens-live.ts); without it such names answer from the map alone, tagged offchain-not-resolved.
   */
  live?: EnsLive;
}): Resolution {
  const { store, ranker, history } = deps;
  const liveNames = deps.live ? createLiveNames({ live: deps.live, store }) : null;

  /** The candidates as ENS clients see them: live records for offchain names, a wildcard match. */
  async function liveCandidates(
    names: string[],
    filter: DomainFilter,
    candidates: DomainWithRecords[],
    ctx: RankContext,
  ): Promise<DomainWithRecords[]> {
    if (liveNames === null) return candidates;
    // The project's own setting (docs/scoring.md): off, such names answer from the map alone.
    const resolveLive = deps.live?.enabled === true && compiledRulesOf(ctx.projectSettings).liveLookups;
    if (candidates.length === 0) {
      if (!resolveLive) return candidates;
      const w = await liveNames.wildcard(names, filter);
      return w === null ? candidates : [w];
    }
    return liveNames.needsLive(candidates) ? liveNames.withLiveRecords(candidates, resolveLive) : candidates;
  }

  function historyOf(): DomainHistory {
    if (!history) throw new AppError("INTERNAL_ERROR", "time travel and provenance are not configured");
    return history;
  }

  // The map as of the point asked for (or the store's), and the ranking context at that time.
  async function viewFor(
    opts: HistoryOptions | undefined,
    filter: DomainFilter,
    ctx: RankContext,
  ): Promise<{ view: MapView; ctx: RankContext }> {
    if (opts?.at === undefined) return { view: store, ctx };
    const at = await historyOf().viewAt(opts.at, filter, ctx.now);
    return { view: at.view, ctx: { ...ctx, now: at.time } };
  }

  async function withProvenance(
    ranked: RankedDomain[],
    opts: HistoryOptions | undefined,
    now: number,
  ): Promise<RankedDomain[]> {
    if (!opts?.provenance || ranked.length === 0) return ranked;
    const p = await historyOf().provenanceOf(
      ranked.map((r) => r.domain),
      opts.at ?? null,
      now,
    );
    return ranked.map((r, i) => {
      const live = liveOriginOf(r.domain);
      const provenance = p[i];
      if (live === undefined || provenance === undefined) return { ...r, provenance };
      // A live record has no event: its origin is the lookup, not anything the journal holds.
      const records: Record<string, null> = {};
      for (const rec of r.domain.records) records[rec.key] = null;
      return { ...r, provenance: { ...provenance, records, live } };
    });
  }

  // Time travel and provenance: the same reads over the view, then the provenance of the answer.
  async function deepResolveWith(
    domain: string,
    filter: DomainFilter,
    ctx: RankContext,
    opts: HistoryOptions,
  ): Promise<RankedDomain[]> {
    const names = lookupNames(domain);
    const { view, ctx: at } = await viewFor(opts, filter, ctx);
    let candidates = await view.findDomainsByName(names, filter);
    // Live answers are of now: a view of the past answers from the map as it was (docs/ens-offchain.md).
    if (liveNames !== null && opts.at === undefined)
      candidates = await liveCandidates(names, filter, candidates, ctx);
    if (candidates.length === 0) return [];
    return withProvenance(ranker.rank(candidates, at), opts, ctx.now);
  }

  // The API's hot path: one async frame between the route and the store (each one more costs
  // a promise and its microtask turns on every request).
  async function deepResolve(
    domain: string,
    filter: DomainFilter,
    ctx: RankContext,
    opts?: HistoryOptions,
  ): Promise<RankedDomain[]> {
    if (opts !== undefined && (opts.at !== undefined || opts.provenance))
      return deepResolveWith(domain, filter, ctx, opts);
    const names = lookupNames(domain);
    let candidates: DomainWithRecords[];
    candidates = await store.findDomainsByName(names, filter);
    if (liveNames !== null) candidates = await liveCandidates(names, filter, candidates, ctx);
    if (candidates.length === 0) return [];
    return ranker.rank(candidates, ctx);
  }

  return {
    deepResolve,

    resolve(domain, filter, ctx, opts) {
      return deepResolve(domain, filter, ctx, opts).then(first);
    },

    async reverseResolve(address, filter, ctx0, opts) {
      const addr = normalizeWalletAddress(address);
      if (addr === null)
        throw new AppError(
          "INVALID_ADDRESS",
          "The wallet address is neither a 0x-prefixed, 20-byte hex address nor a base58 Solana address.",
        );
      const { view, ctx } = await viewFor(opts, filter, ctx0);
      // Reverse records are read without the filter: the filter applies to the domains they name,
      // and a reverse record of one registry may point at a domain of another network.
      const [owned, reverse] = await Promise.all([
        view.findDomainsByOwner(addr, filter),
        view.findReverse(addr, {}),
      ]);
      const byId = new Map<number, DomainWithRecords>();
      for (const d of owned) byId.set(d.id, d);
      const primary = new Set<number>();
      for (const r of reverse) {
        const known = byId.get(r.domainId);
        if (known) {
          if (forwardVerified(known, addr)) primary.add(r.domainId);
          continue;
        }
        // Not among the owned domains read above (filtered out, past the owner query's cap, or an
        // ENS name the address does not own): read it, and count it only if it is forward-verified.
        const d = await view.findDomainById(r.domainId);
        if (d === null) continue;
        const withRecords = { ...d, records: await view.findRecords(d.id) };
        if (!forwardVerified(withRecords, addr) || !matchesFilter(withRecords, filter)) continue;
        byId.set(d.id, withRecords);
        primary.add(d.id);
      }
      if (byId.size === 0) return [];
      const ranked = ranker.rank([...byId.values()], ctx);
      ranked.sort((a, b) => {
        const pa = primary.has(a.domain.id) ? 0 : 1;
        const pb = primary.has(b.domain.id) ? 0 : 1;
        if (pa !== pb) return pa - pb;
        if (a.score !== b.score) return b.score - a.score;
        if (a.domain.name !== b.domain.name) return a.domain.name < b.domain.name ? -1 : 1;
        return a.domain.id - b.domain.id;
      });
      return withProvenance(ranked, opts, ctx0.now);
    },
  };
}
