import { ZERO_ADDRESS } from "../domain/address.js";
import { type NameResult, splitName } from "../domain/names.js";
import type { Domain, DomainRecord } from "../domain/types.js";
import type { DomainEvent, NameTreeRules, ProviderAdapter } from "../providers/provider.js";
import { type FoldTrace, traceRecord } from "./fold-trace.js";
import type { JournalEvent } from "./journal-event.js";

/**
 * The projection of the event journal into domain state: a pure fold, so that applying a range,
 * resuming after a crash and replaying after a reorg all compute the same thing from the same
 * events. Nothing here does I/O; apply-range.ts reads the journal and writes the result.
 */

const REVERSE_PREFIX = "reverse:";

/** The journal groups events by this key: a token id, or `reverse:<address>` for reverse claims. */
export function foldKeyOf(event: DomainEvent): string {
  switch (event.type) {
    case "reverse-set":
    case "reverse-name":
    case "reverse-removed":
      return `${REVERSE_PREFIX}${event.address}`;
    default:
      // reverse-node / node-name concern a reverse node, a token: they meet under its key.
      return event.tokenId;
  }
}

export function isReverseKey(key: string): boolean {
  return key.startsWith(REVERSE_PREFIX);
}

export function reverseKeyAddress(key: string): string {
  return key.slice(REVERSE_PREFIX.length);
}

export function reverseKey(address: string): string {
  return `${REVERSE_PREFIX}${address}`;
}

/** One owner line: who holds the token and since which mint. */
interface Ownership {
  owner: string;
  registeredBlock: number | null;
  registeredAt: number | null;
  contract: string;
  /** The event that made `owner` the owner (provenance). */
  setBy: JournalEvent | null;
}

export interface TokenState {
  tokenId: string;
  owner: string;
  /** Last plaintext full name published for the token (adapters normalize it), or null. */
  name: string | null;
  parentTokenId: string | null;
  /** The label hash under the parent, when only a `subnode` event named the token. */
  labelHash: string | null;
  /** Native records per emitting contract, each in the order last set (later wins on a collision). */
  natives: Map<string, Map<string, string>>;
  /** The node's resolver; only its records count. `undefined` = no resolver event seen. */
  resolver: string | null | undefined;
  expiresAt: number | null;
  registeredBlock: number | null;
  registeredAt: number | null;
  contractAddress: string;
  lastUpdateBlock: number;
  lastUpdateAt: number;
  /** The token is the reverse node of this address (`reverse-node`). */
  reverseOf: string | null;
  /** The node's name() record (`node-name`): a primary name when this is a reverse node. */
  nodeName: string | null;
}

const toMs = (seconds: number | null) => (seconds === null ? null : seconds * 1000);

function own(line: Ownership, to: string, e: JournalEvent): void {
  // A mint (to a token with no live owner) starts a new life: its block is the registration. A
  // burn ends it, so a later re-registration counts from its own mint.
  if (line.owner === ZERO_ADDRESS && to !== ZERO_ADDRESS) {
    line.registeredBlock = e.blockNumber;
    line.registeredAt = toMs(e.blockTime);
    line.contract = e.contract;
  }
  line.owner = to;
  line.setBy = e;
}

/**
 * Folds a token's events, in chain order, into its state. `owner` is the zero address when the
 * token has no live owner (never minted, burned, released): such a token is not a domain. `tree`
 * is the protocol's name-tree rules (provider.ts `NameTreeRules`).
 */
export function foldToken(
  tokenId: string,
  events: readonly JournalEvent[],
  tree: NameTreeRules = {},
  trace?: FoldTrace,
): TokenState {
  const s: TokenState = {
    tokenId,
    owner: ZERO_ADDRESS,
    name: null,
    parentTokenId: null,
    labelHash: null,
    natives: new Map(),
    resolver: undefined,
    expiresAt: null,
    registeredBlock: null,
    registeredAt: null,
    contractAddress: "",
    lastUpdateBlock: 0,
    lastUpdateAt: 0,
    reverseOf: null,
    nodeName: null,
  };
  // Two owner lines: the NFT holder's, and the latest of NFT holder and registry owner. The
  // protocol's tree rules say which one owns the token (the second by default).
  const nft: Ownership = {
    owner: ZERO_ADDRESS,
    registeredBlock: null,
    registeredAt: null,
    contract: "",
    setBy: null,
  };
  const any: Ownership = { ...nft };
  let firstContract = "";
  for (const e of events) {
    const ev = e.event;
    if (firstContract === "") firstContract = e.contract;
    s.lastUpdateBlock = e.blockNumber;
    s.lastUpdateAt = toMs(e.blockTime) ?? s.lastUpdateAt;
    switch (ev.type) {
      case "transfer":
        own(nft, ev.to, e);
        own(any, ev.to, e);
        break;
      case "registry-owner":
        own(any, ev.owner, e);
        break;
      case "name":
        s.name = ev.name;
        if (ev.parentTokenId) s.parentTokenId = ev.parentTokenId;
        break;
      case "subnode":
        s.parentTokenId = ev.parentTokenId;
        s.labelHash = ev.labelHash;
        break;
      case "record": {
        let m = s.natives.get(e.contract);
        if (!m) {
          m = new Map();
          s.natives.set(e.contract, m);
        }
        m.delete(ev.nativeKey); // re-inserted last: the latest write wins a canonical-key collision
        if (ev.nativeValue !== "") m.set(ev.nativeKey, ev.nativeValue);
        if (trace) traceRecord(trace, e, ev.nativeKey);
        break;
      }
      case "records-reset":
        s.natives.get(e.contract)?.clear();
        trace?.natives.get(e.contract)?.clear();
        break;
      case "expiry":
        s.expiresAt = ev.expiresAt * 1000;
        break;
      case "resolver":
        s.resolver = ev.resolver === ZERO_ADDRESS ? null : ev.resolver;
        break;
      case "reverse-node":
        s.reverseOf = ev.address;
        break;
      case "node-name":
        s.nodeName = ev.name === "" ? null : ev.name;
        break;
      default:
        break; // address-keyed reverse events are folded per address (foldReverse)
    }
  }
  const line = tree.ownedByNftHolder?.(s) ? nft : any;
  s.owner = line.owner;
  s.registeredBlock = line.registeredBlock;
  s.registeredAt = line.registeredAt;
  s.contractAddress = line.contract || firstContract;
  if (trace) trace.owner = line.setBy;
  return s;
}

/** Tokens that are not domains: no live owner, a reverse node, or the protocol's bookkeeping. */
export function isDomainState(s: TokenState, tree: NameTreeRules = {}): boolean {
  if (s.owner === ZERO_ADDRESS) return false;
  if (s.reverseOf !== null) return false;
  return tree.isNameToken?.(s) ?? true;
}

/** The native records in force: those of the current resolver when the protocol has resolvers. */
function effectiveNatives(s: TokenState): Array<[string, string]> {
  if (s.resolver !== undefined) return s.resolver === null ? [] : [...(s.natives.get(s.resolver) ?? [])];
  const out: Array<[string, string]> = [];
  for (const m of s.natives.values()) out.push(...m);
  return out;
}

/** Something wrong with chain data, reported (counter + log) but never fatal. */
export interface DataIssue {
  reason: "invalid-name" | "record-too-large" | "record-nul" | "record-mapping" | "reverse-name";
  tokenId: string;
  detail: string;
}

/** Record values above this size are not served (the stale value is dropped, not kept). */
export const MAX_RECORD_BYTES = 65_536;

/** What the projection asks of the protocol: its name rules, record mapping and tree rules. */
export type ProjectionContext = Pick<ProviderAdapter, "normalizeName" | "mapRecord" | "tree">;

export interface ProjectedDomain
  extends Pick<
    Domain,
    | "tokenId"
    | "name"
    | "sld"
    | "tld"
    | "owner"
    | "contractAddress"
    | "resolver"
    | "registeredAt"
    | "registeredBlock"
    | "expiresAt"
    | "lastUpdateBlock"
    | "lastUpdateAt"
  > {
  /** The published name failed normalization: kept under its placeholder, which the scoring rules judge. */
  nameInvalid: boolean;
  records: DomainRecord[];
}

/** Labels never seen in plaintext read `[<hash hex>]` (docs/chain-facts.md); so do unnamed tokens. */
function placeholderName(hash: string): string {
  return `[${hash.replace(/^0x/, "")}]`;
}

const ROOT = `0x${"0".repeat(64)}`;

// PostgreSQL text cannot hold NUL, and no resolver client expects one: replaced, reported.
const stripNul = (s: string) => s.replace(/\u0000/g, "\ufffd");

/** Normalizes a full name, or a single label (a top-level token), under `norm` (the protocol's rules). */
export function normalizeFor(norm: (name: string) => NameResult, name: string): NameResult {
  if (name.includes(".")) return norm(name);
  // A top-level token (a TLD, or `eth`): normalized as the TLD of a throwaway name.
  const r = norm(`x.${name}`);
  if (!r.ok) return r;
  const tld = r.value.tld;
  return { ok: true, value: { name: tld, sld: "", tld, labels: [tld], ascii: r.value.ascii.slice(2) } };
}

const BRACKETED = /\[[0-9a-f]{64}\]/g;
// Lower-case ASCII letters, digits and hyphens in non-empty labels: normalized under every rule.
const PLAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;
const isPlainName = (name: string) => PLAIN.test(name) && name.length <= 253;

/**
 * Turns a folded state into what the store holds: the name checked, the native records mapped onto
 * canonical keys (docs/records.md), bad values dropped or made safe. `parentName` gives the name of a
 * parent token (for nodes named only by a `subnode` event).
 */
export function projectDomain(
  s: TokenState,
  ctx: ProjectionContext,
  parentName: (tokenId: string) => string | null,
  issues: DataIssue[],
): ProjectedDomain {
  let full = s.name;
  // Adapters publish names already normalized and checked against the token id (provider.ts);
  // only a name composed here from labels is checked again.
  let composed = false;
  if (full === null && s.labelHash !== null && s.parentTokenId !== null) {
    composed = true;
    const label = ctx.tree?.knownLabel?.(s.labelHash) ?? placeholderName(s.labelHash);
    const parent =
      s.parentTokenId === ROOT ? "" : (parentName(s.parentTokenId) ?? placeholderName(s.parentTokenId));
    full = parent === "" ? label : `${label}.${parent}`;
  }
  let name = placeholderName(s.tokenId);
  let nameInvalid = false;
  if (full !== null && !composed && isPlainName(full)) name = full;
  else if (full !== null) {
    // Bracketed labels are the notation of unknown labels: only the known labels are checked.
    const known = full.replace(BRACKETED, "x");
    const checked = normalizeFor(ctx.normalizeName, known);
    if (checked.ok) name = known === full ? checked.value.name : full;
    else {
      nameInvalid = true;
      issues.push({ reason: "invalid-name", tokenId: s.tokenId, detail: checked.reason });
    }
  }
  const { sld, tld } = splitName(name);

  const canonical = new Map<string, DomainRecord>();
  for (const [rawKey, rawValue] of effectiveNatives(s)) {
    if (Buffer.byteLength(rawValue, "utf8") > MAX_RECORD_BYTES || rawKey.length > 1024) {
      issues.push({ reason: "record-too-large", tokenId: s.tokenId, detail: stripNul(rawKey.slice(0, 64)) });
      continue;
    }
    let nativeKey = rawKey;
    let nativeValue = rawValue;
    if (rawKey.includes("\u0000") || rawValue.includes("\u0000")) {
      issues.push({ reason: "record-nul", tokenId: s.tokenId, detail: stripNul(rawKey).slice(0, 64) });
      nativeKey = stripNul(rawKey);
      nativeValue = stripNul(rawValue);
    }
    let mapped: Array<{ key: string; value: string }>;
    try {
      mapped = ctx.mapRecord(nativeKey, nativeValue);
    } catch (e) {
      issues.push({
        reason: "record-mapping",
        tokenId: s.tokenId,
        detail: `${nativeKey}: ${(e as Error).message}`,
      });
      mapped = [{ key: nativeKey, value: nativeValue }];
    }
    for (const m of mapped) {
      const key = stripNul(m.key);
      canonical.set(key, { key, value: stripNul(m.value), nativeKey, nativeValue });
    }
  }

  return {
    tokenId: s.tokenId,
    name,
    sld,
    tld,
    nameInvalid,
    owner: s.owner,
    contractAddress: s.contractAddress,
    resolver: s.resolver ?? null,
    registeredAt: s.registeredAt,
    registeredBlock: s.registeredBlock,
    expiresAt: s.expiresAt,
    lastUpdateBlock: s.lastUpdateBlock,
    lastUpdateAt: s.lastUpdateAt,
    records: [...canonical.values()],
  };
}

/** What an address's reverse claims come to: a token, a name to hash, or nothing. */
export type ReverseState = { tokenId: string } | { name: string } | null;

/**
 * Folds an address's reverse events. `nodeName` is the name() record of the address's reverse
 * node (NameTreeRules.reverseNodeOf), which takes precedence over the reverse claims.
 */
export function foldReverse(events: readonly JournalEvent[], nodeName: string | null = null): ReverseState {
  let state: ReverseState = null;
  for (const { event } of events) {
    if (event.type === "reverse-set") state = { tokenId: event.tokenId };
    else if (event.type === "reverse-name") state = event.name === "" ? null : { name: event.name };
    else if (event.type === "reverse-removed") state = null;
  }
  return nodeName ? { name: nodeName } : state;
}

/** The event that set a native record in force in `s` (the current resolver's, when it has one). */
export function recordEventOf(s: TokenState, trace: FoldTrace, nativeKey: string): JournalEvent | null {
  if (s.resolver !== undefined)
    return s.resolver === null ? null : (trace.natives.get(s.resolver)?.get(nativeKey) ?? null);
  // Without resolvers every contract's records count and the last contract's win (effectiveNatives).
  let found: JournalEvent | null = null;
  for (const [contract, m] of s.natives)
    if (m.has(nativeKey)) found = trace.natives.get(contract)?.get(nativeKey) ?? found;
  return found;
}
