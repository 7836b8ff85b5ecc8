import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import { normalizeName } from "../domain/names.js";
import { callData } from "./deploy.js";
import {
  type SeedDomain,
  type SeedStep,
  UPDATE_DELAY,
  initialRecords,
  ownerChain,
  recordMap,
  toSeconds,
} from "./seed-plan.js";
import { unsTokenId } from "./seed-uns.js";
import { fnsTokenId } from "./token-ids.js";
import type { TxRequest } from "./tx-sender.js";

/** Gas for one mint with its records: long texts take one storage slot per 32 bytes. */
function recordsGas(records: ReadonlyArray<readonly [string, string]>): bigint {
  let bytes = 0;
  for (const [k, v] of records) bytes += k.length + Buffer.byteLength(v);
  // Per record: the value, the preset's key list (getAllKeys) and, the first time, the key table.
  return 1_000_000n + BigInt(records.length) * 200_000n + BigInt(bytes) * 2_000n;
}

/** Freename token ids and URIs use the punycode ASCII form of the name. */
function fnsAsciiName(name: string): string {
  const n = normalizeName(name);
  if (!n.ok) throw new AppError("INVALID_DOMAIN", `FNS fixture ${name}: ${n.reason}`);
  return n.value.ascii;
}

/** The on-chain token id of a FNS or UNS seed domain. */
export function registryTokenId(d: SeedDomain): bigint {
  return d.provider === "NAMESPACE_A" ? fnsTokenId(fnsAsciiName(d.name)) : unsTokenId(d.name);
}

/**
 * FNS, through Freename's own function ABI: the registration step (`mintWithRecords(to, tokenId,
 * uri, keys, values)` by the minter, to the first owner, uri = the punycode name) and the update
 * step (the minter's `transferFrom` along the history, `reconfigure` for a reset, and the owner's
 * own `setReverse(tokenId)`). UNS runs on the real contracts: seed-uns.ts.
 */
export function planRegistryDomain(d: SeedDomain, registry: Hex): SeedStep[] {
  const contract = "FNSRegistry";
  const tokenId = registryTokenId(d);
  const owners = ownerChain(d);
  const first = recordMap(initialRecords(d));
  const keys = [...first.keys()];
  const values = [...first.values()];
  const gas = recordsGas(initialRecords(d));
  const label = `${contract} ${d.name}`;

  const mint: TxRequest = {
    to: registry,
    data: callData(contract, "mintWithRecords", [owners[0], tokenId, fnsAsciiName(d.name), keys, values]),
    gas,
    label: `${label}: mint`,
  };
  const at = toSeconds(d.registeredAt);
  const steps: SeedStep[] = [{ at, txs: [mint], registers: `${d.provider}/${d.name}` }];

  const updates: TxRequest[] = [];
  for (let i = 1; i < owners.length; i++) {
    updates.push({
      to: registry,
      data: callData(contract, "transferFrom", [owners[i - 1], owners[i], tokenId]),
      label: `${label}: transfer to ${owners[i]}`,
    });
  }
  if (d.history?.resetRecordsBefore) {
    const now = recordMap(d.records);
    updates.push({
      to: registry,
      data: callData(contract, "reconfigure", [[...now.keys()], [...now.values()], tokenId]),
      gas: recordsGas(d.records),
      label: `${label}: reset and set records`,
    });
  }
  if (d.reverse) {
    // The reverse record is the caller's own: the owner sends it (impersonated, tx-sender.ts),
    // after the transfers that made it the owner (same block, sent later: mined later).
    updates.push({
      from: d.owner as Hex,
      to: registry,
      data: callData(contract, "setReverse", [tokenId]),
      label: `${label}: reverse`,
    });
  }
  if (updates.length > 0) steps.push({ at: at + UPDATE_DELAY, txs: updates });
  return steps;
}
