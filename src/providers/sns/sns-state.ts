import type { Address } from "@solana/kit";
import { ZERO_ADDRESS } from "../../domain/address.js";
import type { DomainEvent, Hex } from "../provider.js";
import {
  addressBytes,
  addressOf,
  decodeNameRegistry,
  decodePrimary,
  decodeRecordV2,
  decodeReverse,
  domainKeyOf,
  primaryKeyOf,
  RECORDS_V2_CLASS,
  recordV1KeyOf,
  recordV2KeyOf,
  SNS_PROGRAMS,
  VALIDATION,
} from "./sns-program.js";
import { decodeRecordV1Content, decodeRecordV2Content, SNS_RECORDS } from "./sns-records.js";

/** One account as read from the chain: address and raw data (owner program implied by the query). */
/** The zero key (no class, no parent), base58. */
const SYSTEM = "11111111111111111111111111111111" as Address;

export interface RawAccount {
  address: Address;
  data: Uint8Array;
}

/**
 * What one scan of the SNS programs' accounts returned (crawler/sns-sync.ts reads it): the
 * `.sol` second-level name accounts, every reverse account, every Records V2 account, the
 * class-zero children of each domain (subdomains and V1 records), the primary-domain accounts, and
 * the holder of each tokenized name's mint.
 */
export interface SnsSnapshot {
  slot: number;
  domains: RawAccount[];
  reverses: RawAccount[];
  recordsV2: RawAccount[];
  children: RawAccount[];
  primaries: RawAccount[];
  /** Tokenized names: name account → the mint holder (amount 1), or null when nobody holds it. */
  nftHolders: ReadonlyMap<Address, Address | null>;
  /** Tokenized names: name account → the token account holding its NFT (the source watches it). */
  nftAccounts?: ReadonlyMap<Address, Address>;
}

/** A name's state as the SDK would answer it: its owner rule, V2 records (fresh) over V1. */
export interface SnsDomainState {
  key: Address;
  name: string;
  owner: Address;
  /** SNS record name → value, in SNS_RECORDS order. */
  records: Array<[string, string]>;
}

export interface SnsIssue {
  account: Address;
  reason: string;
}

export interface SnsState {
  domains: SnsDomainState[];
  /** Wallet → the name account of its primary domain (only when the wallet owns it: not stale). */
  primaries: Map<Address, Address>;
  issues: SnsIssue[];
}

/** The token id of a name account: its 32 bytes as 0x hex (the map's token ids are 32-byte hex). */
export function snsTokenId(key: Address): Hex {
  return `0x${Buffer.from(addressBytes(key)).toString("hex")}`;
}

/**
 * Folds one scan into each name's state. Every account is attacker-controlled (anyone can create
 * name accounts under their own parent, and a name account's owner can write its data): a bad one
 * is skipped and reported, never fatal. A name account is served only when its reverse account
 * names it (the SDK's `reverseLookup`) and that name derives back to the same account.
 */
export function snsStateOf(snap: SnsSnapshot): SnsState {
  const issues: SnsIssue[] = [];
  const v2 = new Map<Address, RawAccount>(snap.recordsV2.map((a) => [a.address, a]));
  const children = new Map<Address, RawAccount>(snap.children.map((a) => [a.address, a]));
  const named: Array<{ key: Address; name: string; owner: Address }> = [];

  // The names of the `.sol` names, from their reverse accounts. Only the registrar can create an
  // account of the reverse class (the name service makes the class sign), so a reverse account is
  // trusted to be the registrar's; its name must still derive the account it names. One PDA a name:
  // deriving each domain's reverse key instead would cost another.
  const nameByKey = new Map<Address, string>();
  for (const rev of snap.reverses) {
    const h = decodeNameRegistry(rev.data);
    if ("error" in h) {
      issues.push({ account: rev.address, reason: h.error });
      continue;
    }
    if (h.parent !== SYSTEM) continue; // a subdomain's: read with its parent below
    const label = decodeReverse(h.data);
    if (typeof label !== "string") {
      issues.push({ account: rev.address, reason: label.error });
      continue;
    }
    const key = domainKeyOf(`${label}.sol`);
    if (key) nameByKey.set(key, `${label}.sol`);
  }
  const nameOf = (key: Address): string | null => {
    const name = nameByKey.get(key);
    if (name === undefined) issues.push({ account: key, reason: "no reverse account names it" });
    return name ?? null;
  };
  const ownerOf = (key: Address, registryOwner: Address): Address => {
    // The SDK's rule: the holder of the name's mint when there is one, else the registry owner.
    return snap.nftHolders.get(key) ?? registryOwner;
  };

  for (const a of snap.domains) {
    const r = decodeNameRegistry(a.data);
    if ("error" in r) {
      issues.push({ account: a.address, reason: r.error });
      continue;
    }
    if (r.parent !== SNS_PROGRAMS.solRoot) continue;
    if (r.nameClass !== SYSTEM) {
      issues.push({ account: a.address, reason: `unknown class ${r.nameClass}` });
      continue;
    }
    const name = nameOf(a.address);
    if (name) named.push({ key: a.address, name, owner: ownerOf(a.address, r.owner) });
  }
  // Subdomains: a reverse account whose parent is a named domain gives the label; the subdomain's
  // account must be among that domain's children.
  const byKey = new Map(named.map((n) => [n.key, n]));
  for (const rev of snap.reverses) {
    const h = decodeNameRegistry(rev.data);
    if ("error" in h || h.parent === SYSTEM || !byKey.has(h.parent)) continue;
    const parent = byKey.get(h.parent) as { key: Address; name: string };
    const label = decodeReverse(h.data);
    if (typeof label !== "string") {
      issues.push({ account: rev.address, reason: label.error });
      continue;
    }
    const key = domainKeyOf(`${label}.${parent.name}`);
    const child = key ? children.get(key) : undefined;
    if (!key || !child) continue;
    const c = decodeNameRegistry(child.data);
    if ("error" in c) {
      issues.push({ account: key, reason: c.error });
      continue;
    }
    if (c.parent !== parent.key) continue;
    named.push({ key, name: `${label}.${parent.name}`, owner: ownerOf(key, c.owner) });
  }

  // Record keys are derived only for names with record accounts (56 PDAs a name otherwise).
  const withRecords = new Set<string>();
  for (const a of [...snap.recordsV2, ...snap.children])
    if (a.data.length >= 32) withRecords.add(addressOf(a.data.subarray(0, 32)));
  const domains: SnsDomainState[] = [];
  for (const n of named) {
    const records: Array<[string, string]> = [];
    if (withRecords.has(n.key))
      for (const record of SNS_RECORDS) {
        const value = recordOf(n, record, v2, children, issues);
        if (value !== null) records.push([record, value]);
      }
    domains.push({ key: n.key, name: n.name, owner: n.owner, records });
  }

  const primaries = new Map<Address, Address>();
  const owners = new Map<Address, Address[]>();
  for (const d of domains) {
    const list = owners.get(d.owner);
    if (list) list.push(d.key);
    else owners.set(d.owner, [d.key]);
  }
  const primaryAccounts = new Map(snap.primaries.map((a) => [a.address, a]));
  for (const [wallet, keys] of owners) {
    const acc = primaryAccounts.get(primaryKeyOf(wallet));
    if (!acc) continue;
    const target = decodePrimary(acc.data);
    // A primary domain the wallet no longer owns is stale (the SDK's `stale`): not served.
    if (target && keys.includes(target)) primaries.set(wallet, target);
  }
  return { domains, primaries, issues };
}

/** A record's value: a fresh V2 record when there is one, else the V1 record; null when neither reads. */
function recordOf(
  n: { key: Address; owner: Address },
  record: string,
  v2: ReadonlyMap<Address, RawAccount>,
  children: ReadonlyMap<Address, RawAccount>,
  issues: SnsIssue[],
): string | null {
  const acc = v2.get(recordV2KeyOf(n.key, record));
  if (acc) {
    const h = decodeNameRegistry(acc.data);
    const body =
      "error" in h ? h : h.nameClass === RECORDS_V2_CLASS ? decodeRecordV2(h.data) : { error: "wrong class" };
    if ("error" in body) {
      issues.push({ account: acc.address, reason: body.error });
      return null;
    }
    // Stale: signed by a previous owner (Bonfida's `verified.staleness` false): not served.
    const fresh =
      body.stalenessValidation === VALIDATION.Solana &&
      Buffer.from(body.stalenessId).equals(Buffer.from(addressBytes(n.owner)));
    if (!fresh) return null;
    return decodeRecordV2Content(record, body.content);
  }
  const v1 = children.get(recordV1KeyOf(n.key, record));
  if (!v1) return null;
  const h = decodeNameRegistry(v1.data);
  if ("error" in h) {
    issues.push({ account: v1.address, reason: h.error });
    return null;
  }
  return decodeRecordV1Content(record, h.data);
}

/**
 * The events that set a name to `state` (or release it: `null`): its name, its owner, and its
 * records wholesale. Solana gives states, not deltas: each observed change is the name's full
 * state, and the projection's fold keeps the last one.
 */
export function snsEventsOf(key: Address, state: SnsDomainState | null): DomainEvent[] {
  const tokenId = snsTokenId(key);
  if (state === null) return [{ type: "transfer", tokenId, from: "", to: ZERO_ADDRESS }];
  return [
    { type: "name", tokenId, name: state.name },
    { type: "transfer", tokenId, from: "", to: state.owner },
    { type: "records-reset", tokenId },
    ...state.records.map(
      ([nativeKey, nativeValue]): DomainEvent => ({ type: "record", tokenId, nativeKey, nativeValue }),
    ),
  ];
}
