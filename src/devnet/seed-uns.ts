import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import { normalizeName } from "../domain/names.js";
import type { Network } from "../domain/networks.js";
import { generatedAddress } from "./fixture-values.js";
import { EXPIRABLE_TLDS, type UnsAddresses, unsCall } from "./real-uns.js";
import {
  type SeedDomain,
  type SeedStep,
  UPDATE_DELAY,
  initialRecords,
  ownerChain,
  recordMap,
  toSeconds,
} from "./seed-plan.js";
import { namehashId } from "./token-ids.js";
import type { TxRequest } from "./tx-sender.js";

/**
 * Seeds UNS names through the real contracts' entry points (real-uns.ts):
 *
 * - registration: `MintingManager.issueWithRecords` (deployer = minter), or
 *   `issueExpirableWithRecords` for a name with an expiry. The manager only issues expiring names
 *   under an expirable TLD, and mainnet's `crypto`, `nft`, … are not: the deployer (the manager's
 *   owner) flips the TLD to expirable around that one issue (`addTld(tld, true)` … `addTld(tld,
 *   false)`, both real owner calls), so the fixture world keeps its expiring names.
 * - names go on chain in punycode ASCII: the manager accepts only `[a-z0-9-]` labels
 *   (`café.wallet` is minted as `xn--caf-dma.wallet`, token id = namehash of that).
 * - history, ten minutes later, each call sent by the owner (the registry lets only the owner or
 *   an approved account act): transfers along `previousOwners` with `setOwner` (records kept),
 *   the last one with `transferFrom`, which resets the records (ResetRecords), after which the
 *   new owner writes them again with `setMany` + `set`; a reset is `reconfigure` (ResetRecords +
 *   Set); the reverse record is `setReverse(labels)` from the owner.
 * - burns: {@link UNS_BURNED} names (not in the fixture world) are issued with a reverse record
 *   and burned by their owner ten minutes later (ResetRecords, RemoveReverse, Transfer to zero).
 */

/** Names issued and then burned on each chain; never served (a burned token is no domain). */
export const UNS_BURNED: Readonly<Partial<Record<Network, string>>> = {
  ETHEREUM: "gone.nft",
  POLYGON: "gone.x",
};
export const UNS_BURNED_OWNER = generatedAddress("uns-burned") as Hex;

/** The on-chain (punycode ASCII) form of a UNS name. */
export function unsAsciiName(name: string): string {
  const n = normalizeName(name);
  if (!n.ok) throw new AppError("INVALID_DOMAIN", `UNS fixture ${name}: ${n.reason}`);
  return n.value.ascii;
}

/** The UNS token id of a seed name: namehash of its ASCII form. */
export function unsTokenId(name: string): bigint {
  return namehashId(unsAsciiName(name));
}

/** Gas for one issue or setMany: long texts take one storage slot per 32 bytes. */
function recordsGas(records: ReadonlyArray<readonly [string, string]>): bigint {
  let bytes = 0;
  for (const [k, v] of records) bytes += k.length + Buffer.byteLength(v);
  return 1_200_000n + BigInt(records.length) * 180_000n + BigInt(bytes) * 2_000n;
}

/** The issue transaction(s) of a name: expiring names flip a non-expirable TLD around the issue. */
export function unsIssueTxs(
  a: Pick<UnsAddresses, "mintingManager">,
  to: string,
  asciiName: string,
  records: ReadonlyArray<readonly [string, string]>,
  options: { expiry?: number | null; withReverse?: boolean; label?: string } = {},
): TxRequest[] {
  const labels = asciiName.split(".");
  const map = recordMap(records);
  const keys = [...map.keys()];
  const values = [...map.values()];
  const gas = recordsGas(records);
  const label = options.label ?? `UNS ${asciiName}: issue`;
  const withReverse = options.withReverse ?? false;
  if (options.expiry == null) {
    return [
      {
        to: a.mintingManager,
        data: unsCall("MintingManager", "issueWithRecords", [to, labels, keys, values, withReverse]),
        gas,
        label,
      },
    ];
  }
  const tld = labels[labels.length - 1];
  const issue: TxRequest = {
    to: a.mintingManager,
    data: unsCall("MintingManager", "issueExpirableWithRecords", [
      to,
      labels,
      keys,
      values,
      BigInt(options.expiry),
      withReverse,
    ]),
    gas,
    label,
  };
  if (EXPIRABLE_TLDS.includes(tld)) return [issue];
  const flip = (expirable: boolean): TxRequest => ({
    to: a.mintingManager,
    data: unsCall("MintingManager", "addTld", [tld, expirable]),
    gas: 300_000n,
    label: `UNS addTld ${tld} ${expirable}`,
  });
  return [flip(true), issue, flip(false)];
}

/** The registration and history steps of one UNS fixture domain. */
export function planUnsDomain(d: SeedDomain, a: UnsAddresses): SeedStep[] {
  const ascii = unsAsciiName(d.name);
  const labels = ascii.split(".");
  const tokenId = namehashId(ascii);
  const owners = ownerChain(d) as Hex[];
  const at = toSeconds(d.registeredAt);
  const issue = unsIssueTxs(a, owners[0], ascii, initialRecords(d), {
    expiry: d.expiresAt === null ? null : toSeconds(d.expiresAt),
    label: `UNS ${d.network}/${d.name}: issue`,
  });
  const steps: SeedStep[] = [{ at, txs: issue, registers: `${d.provider}/${d.name}` }];

  const label = `UNS ${d.network}/${d.name}`;
  const registry = a.registry;
  const updates: TxRequest[] = [];
  for (let i = 1; i < owners.length; i++) {
    const from = owners[i - 1];
    const to = owners[i];
    if (i < owners.length - 1) {
      updates.push({
        from,
        to: registry,
        data: unsCall("UNSRegistry", "setOwner", [to, tokenId]),
        label: `${label}: setOwner to ${to}`,
      });
      continue;
    }
    updates.push({
      from,
      to: registry,
      data: unsCall("UNSRegistry", "transferFrom", [from, to, tokenId]),
      label: `${label}: transferFrom to ${to}`,
    });
    // transferFrom reset the records: the new owner writes them again (setMany, then one set).
    const now = [...recordMap(d.history?.resetRecordsBefore ? [] : d.records)];
    const last = now.pop();
    if (now.length > 0) {
      updates.push({
        from: to,
        to: registry,
        data: unsCall("UNSRegistry", "setMany", [now.map(([k]) => k), now.map(([, v]) => v), tokenId]),
        gas: recordsGas(now),
        label: `${label}: setMany by the new owner`,
      });
    }
    if (last) {
      updates.push({
        from: to,
        to: registry,
        data: unsCall("UNSRegistry", "set", [last[0], last[1], tokenId]),
        gas: recordsGas([last]),
        label: `${label}: set by the new owner`,
      });
    }
  }
  if (d.history?.resetRecordsBefore) {
    const now = recordMap(d.records);
    updates.push({
      from: d.owner as Hex,
      to: registry,
      data: unsCall("UNSRegistry", "reconfigure", [[...now.keys()], [...now.values()], tokenId]),
      gas: recordsGas(d.records),
      label: `${label}: reconfigure`,
    });
  }
  if (d.reverse) {
    updates.push({
      from: d.owner as Hex,
      to: registry,
      data: unsCall("UNSRegistry", "setReverse", [labels]),
      gas: 300_000n,
      label: `${label}: setReverse`,
    });
  }
  if (updates.length > 0) steps.push({ at: at + UPDATE_DELAY, txs: updates });
  return steps;
}

/**
 * The burn story of one chain ({@link UNS_BURNED}): issued with a reverse record an hour after
 * the chain's first UNS registration (`firstAt`, seconds), burned ten minutes later.
 */
export function planUnsBurn(network: Network, a: UnsAddresses, firstAt: number): SeedStep[] {
  const name = UNS_BURNED[network];
  if (!name) return [];
  const at = firstAt + 3_600;
  const records: Array<[string, string]> = [
    ["crypto.ETH.address", UNS_BURNED_OWNER],
    ["browser.redirect_url", `https://${name}.example.com`],
  ];
  return [
    { at, txs: unsIssueTxs(a, UNS_BURNED_OWNER, name, records, { withReverse: true }) },
    {
      at: at + UPDATE_DELAY,
      txs: [
        {
          from: UNS_BURNED_OWNER,
          to: a.registry,
          data: unsCall("UNSRegistry", "burn", [namehashId(name)]),
          gas: 300_000n,
          label: `UNS ${network}/${name}: burn`,
        },
      ],
    },
  ];
}

/** A legacy `.crypto` name on the CNSRegistry (ETHEREUM), never migrated to UNS. */
export interface CnsName {
  name: string;
  owner: Hex;
  /** Set through the CNS Resolver's `preconfigure` at the mint. */
  records: Array<[string, string]>;
  /**
   * Ten minutes later: `transfer` (transferFrom to `newOwner`: the registry drops the resolver,
   * so the name reads without records), `transfer-resolve` (the same, then the new owner points
   * the name at the resolver again, whose records come back, and `set`s `update`), `reconfigure`
   * (the owner replaces the records: ResetRecords + Set), `burn`.
   */
  history?: "transfer" | "transfer-resolve" | "reconfigure" | "burn";
  newOwner?: Hex;
  update?: [string, string];
  reconfigured?: Array<[string, string]>;
}

const cnsOwner = (seed: string) => generatedAddress(`cns-${seed}`) as Hex;

/** The legacy CNS world: minted a day before the chain's first UNS registration, one a minute. */
export const CNS_NAMES: readonly CnsName[] = [
  {
    name: "legacy.crypto",
    owner: cnsOwner("legacy"),
    records: [
      ["crypto.ETH.address", cnsOwner("legacy")],
      ["crypto.BTC.address", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"],
      ["browser.redirect_url", "https://legacy.example.com"],
      ["ipfs.html.value", "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"],
    ],
  },
  {
    name: "oldtimer.crypto",
    owner: cnsOwner("oldtimer"),
    records: [
      ["crypto.ETH.address", cnsOwner("oldtimer")],
      ["browser.redirect_url", "https://oldtimer.example.com"],
    ],
    history: "transfer-resolve",
    newOwner: cnsOwner("oldtimer-buyer"),
    update: ["whois.email.value", "buyer@example.org"],
  },
  {
    name: "vintage.crypto",
    owner: cnsOwner("vintage"),
    records: [
      ["crypto.ETH.address", cnsOwner("vintage")],
      ["social.twitter.username", "vintage_old"],
    ],
    history: "reconfigure",
    reconfigured: [
      ["crypto.ETH.address", cnsOwner("vintage")],
      ["dns.A", '["198.51.100.77"]'],
    ],
  },
  {
    name: "detached.crypto",
    owner: cnsOwner("detached"),
    records: [["crypto.ETH.address", cnsOwner("detached")]],
    history: "transfer",
    newOwner: cnsOwner("detached-buyer"),
  },
  {
    name: "dropped.crypto",
    owner: cnsOwner("dropped"),
    records: [["crypto.ETH.address", cnsOwner("dropped")]],
    history: "burn",
  },
];

/** What a CNS name holds once seeded: its owner and records (null: burned, not a domain). */
export function cnsFinal(c: CnsName): { owner: Hex; records: Array<[string, string]> } | null {
  switch (c.history) {
    case "burn":
      return null;
    case "transfer":
      return { owner: c.newOwner!, records: [] };
    case "transfer-resolve":
      return { owner: c.newOwner!, records: [...recordMap([...c.records, c.update!])] };
    case "reconfigure":
      return { owner: c.owner, records: c.reconfigured! };
    default:
      return { owner: c.owner, records: c.records };
  }
}

/** The CNS world's steps on ETHEREUM (needs the CNS contracts of real-uns.ts). */
export function planCns(a: UnsAddresses, firstAt: number): SeedStep[] {
  if (!a.cnsRegistry || !a.cnsMintingController || !a.cnsResolver) return [];
  const { cnsRegistry, cnsMintingController, cnsResolver } = a;
  const steps: SeedStep[] = [];
  CNS_NAMES.forEach((c, i) => {
    const at = firstAt - 86_400 + i * 60;
    const label = c.name.slice(0, c.name.indexOf("."));
    const tokenId = namehashId(c.name);
    const tag = `CNS ${c.name}`;
    const keys = c.records.map(([k]) => k);
    const values = c.records.map(([, v]) => v);
    steps.push({
      at,
      txs: [
        {
          to: cnsMintingController,
          data: unsCall("MintingController", "mintSLDWithResolver", [c.owner, label, cnsResolver]),
          gas: 500_000n,
          label: `${tag}: mint`,
        },
        {
          to: cnsResolver,
          data: unsCall("Resolver", "preconfigure", [keys, values, tokenId]),
          gas: recordsGas(c.records),
          label: `${tag}: preconfigure`,
        },
      ],
    });
    const later: TxRequest[] = [];
    const call = (from: Hex, to: Hex, contract: string, fn: string, args: readonly unknown[]) =>
      later.push({ from, to, data: unsCall(contract, fn, args), gas: 600_000n, label: `${tag}: ${fn}` });
    if (c.history === "transfer" || c.history === "transfer-resolve") {
      call(c.owner, cnsRegistry, "CNSRegistry", "transferFrom", [c.owner, c.newOwner, tokenId]);
    }
    if (c.history === "transfer-resolve") {
      call(c.newOwner!, cnsRegistry, "CNSRegistry", "resolveTo", [cnsResolver, tokenId]);
      call(c.newOwner!, cnsResolver, "Resolver", "set", [c.update![0], c.update![1], tokenId]);
    }
    if (c.history === "reconfigure") {
      const r = c.reconfigured!;
      call(c.owner, cnsResolver, "Resolver", "reconfigure", [
        r.map(([k]) => k),
        r.map(([, v]) => v),
        tokenId,
      ]);
    }
    if (c.history === "burn") call(c.owner, cnsRegistry, "CNSRegistry", "burn", [tokenId]);
    if (later.length > 0) steps.push({ at: at + UPDATE_DELAY, txs: later });
  });
  return steps;
}
