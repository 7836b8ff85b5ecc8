import type { Address } from "@solana/kit";
import {
  addressOf,
  decodeNameRegistry,
  decodeReverse,
  domainKeyOf,
  nftRecordOf,
  primaryKeyOf,
  RECORDS_V2_CLASS,
  reverseKeyOf,
  SNS_PROGRAMS,
  tokenizedMintOf,
} from "../providers/sns/sns-program.js";
import { type RawAccount, type SnsSnapshot, snsStateOf } from "../providers/sns/sns-state.js";
import type { SolanaReader } from "./solana-reader.js";

const SYSTEM = "11111111111111111111111111111111" as Address;

// What the SNS source's passes read (sns-sync.ts): everything (fullSnapshot), or only the names
// that changed accounts belong to (touchedDomains, then partialSnapshot).

/**
 * The `.sol` second-level names that changed name service accounts belong to, for a pass over
 * those names alone (docs/sns.md); null when one of them cannot be placed (a closed account the
 * map does not know, data too short for a header), and only a full pass can tell.
 *
 * - a name account under the `.sol` root is a second-level name itself;
 * - a reverse account without parent names its second-level name in its data;
 * - any other account (a subdomain, its reverse, a V1 or Records V2 record) belongs to its parent,
 *   itself a second-level name or a subdomain whose second-level name `topOf` knows.
 */
export function touchedDomains(
  accounts: readonly RawAccount[],
  topOf: ReadonlyMap<Address, Address>,
): Set<Address> | null {
  const out = new Set<Address>();
  for (const a of accounts) {
    const known = topOf.get(a.address);
    if (known !== undefined) {
      out.add(known);
      if (a.data.length === 0) continue;
    }
    const h = decodeNameRegistry(a.data);
    if ("error" in h) return null;
    if (h.parent === SNS_PROGRAMS.solRoot) out.add(a.address);
    else if (h.parent === SYSTEM) {
      // A top-level reverse account: its name is re-read with the domain's own reverse below.
      if (h.nameClass !== SNS_PROGRAMS.reverseClass) continue;
      const label = decodeReverse(h.data);
      const key = typeof label === "string" ? domainKeyOf(`${label}.sol`) : null;
      if (key === null) return null;
      out.add(key);
    } else out.add(topOf.get(h.parent) ?? h.parent);
  }
  return out;
}

/**
 * What a full pass's snapshot holds for `domains` and their subdomains only: their accounts,
 * their reverse accounts, their children (one `getProgramAccounts` by parent each), the Records V2
 * of their subdomains, the primary-domain accounts of their owners and the holders of the tokenized
 * ones. Folded by `snsStateOf` exactly as the full snapshot is.
 */
export async function partialSnapshot(
  reader: SolanaReader,
  domains: readonly Address[],
): Promise<SnsSnapshot> {
  const slot = await reader.slot();
  const ns = SNS_PROGRAMS.nameService;
  const present = (list: Array<RawAccount | null>) => list.filter((a): a is RawAccount => a !== null);
  const [own, ownReverses] = await Promise.all([
    reader.multipleAccounts(domains),
    reader.multipleAccounts(domains.map((d) => reverseKeyOf(d, null))),
  ]);
  const children: RawAccount[] = [];
  for (const d of domains)
    children.push(...(await reader.programAccounts(ns, [{ memcmp: { offset: 0, bytes: d } }])));
  const classOf = (a: RawAccount) => {
    const h = decodeNameRegistry(a.data);
    return "error" in h ? null : h.nameClass;
  };
  const snap: SnsSnapshot = {
    slot,
    domains: present(own),
    reverses: [...present(ownReverses), ...children.filter((a) => classOf(a) === SNS_PROGRAMS.reverseClass)],
    recordsV2: children.filter((a) => classOf(a) === RECORDS_V2_CLASS),
    children,
    primaries: [],
    nftHolders: new Map(),
  };
  // The names the accounts make (subdomains included), then what hangs on them.
  const named = snsStateOf(snap).domains;
  for (const n of named)
    if (n.name.split(".").length > 2)
      for (const a of await reader.programAccounts(ns, [{ memcmp: { offset: 0, bytes: n.key } }]))
        if (classOf(a) === RECORDS_V2_CLASS) snap.recordsV2.push(a);
  const nftRecords = await reader.multipleAccounts(named.map((n) => nftRecordOf(n.key)));
  const holders = new Map<Address, Address | null>();
  const nftAccounts = new Map<Address, Address>();
  for (const [i, rec] of nftRecords.entries())
    if (rec && rec.data.length === 98 && rec.data[0] === 2) {
      const holding = await reader.nftHolding(tokenizedMintOf(named[i].key));
      holders.set(named[i].key, holding?.holder ?? null);
      if (holding) nftAccounts.set(named[i].key, holding.tokenAccount);
    }
  snap.nftHolders = holders;
  snap.nftAccounts = nftAccounts;
  const owners = [...new Set(snsStateOf(snap).domains.map((d) => d.owner))];
  snap.primaries = present(await reader.multipleAccounts(owners.map(primaryKeyOf)));
  return snap;
}

/**
 * Everything a full pass reads, at one slot: the `.sol` root's children, reverse accounts, Records
 * V2, primary domains, the tokenizer's NFT records and each active one's holder, and (`children`,
 * default true) each domain's own children, `concurrency` (default 8) `getProgramAccounts` at once.
 */
export async function fullSnapshot(
  reader: SolanaReader,
  o: { children?: boolean; concurrency?: number },
): Promise<SnsSnapshot> {
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
  const nftAccounts = new Map<Address, Address>();
  for (const n of nftRecords) {
    // NFT record: tag, nonce, name account (2..34), owner, mint. Active records only (tag 2).
    if (n.data[0] !== 2) continue;
    const domain = addressOf(n.data.subarray(2, 34));
    const holding = await reader.nftHolding(tokenizedMintOf(domain));
    nftHolders.set(domain, holding?.holder ?? null);
    if (holding) nftAccounts.set(domain, holding.tokenAccount);
  }
  return { slot, domains, reverses, recordsV2, children, primaries, nftHolders, nftAccounts };
}
