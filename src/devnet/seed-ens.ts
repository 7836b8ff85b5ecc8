import { type Hex, isAddress } from "viem";
import { AppError } from "../domain/errors.js";
import { callData, type EnsAddresses } from "./deploy.js";
import {
  type SeedDomain,
  type SeedStep,
  UPDATE_DELAY,
  initialRecords,
  ownerChain,
  recordMap,
  toSeconds,
} from "./seed-plan.js";
import { labelhash, namehash } from "./token-ids.js";
import type { TxRequest } from "./tx-sender.js";

/** How each ENS name is written on chain; verify.ts reads the same decisions back. */
export interface EnsChoice {
  /** Wrapped names live in the NameWrapper (ERC-1155); the others in the registrar (ERC-721). */
  wrapped: boolean;
  /** Which contract carries the reverse record, when the domain has one. */
  reverseVia: "reverseRegistrar" | "defaultReverseRegistrar" | null;
}

/**
 * Deterministic choices over the ENS domains of a world, in world order: every other .eth name
 * is wrapped (both mainnet paths get exercised) and so is every parent of a subname (subnames are
 * created through the wrapper, which is how their labels become known); reverse records
 * alternate between the ReverseRegistrar (ReverseClaimed + resolver NameChanged) and the ENSIP-19
 * DefaultReverseRegistrar (NameForAddrChanged).
 */
export function ensChoices(domains: readonly SeedDomain[]): Map<string, EnsChoice> {
  const ens = domains.filter((d) => d.provider === "NAMESPACE_C");
  const parents = new Set(ens.filter((d) => d.name.split(".").length > 2).map((d) => parentOf(d.name)));
  const out = new Map<string, EnsChoice>();
  let secondLevel = 0;
  let reverses = 0;
  for (const d of ens) {
    const labels = d.name.split(".");
    if (labels[labels.length - 1] !== "eth") {
      throw new AppError("INVALID_DOMAIN", `ENS devnet names live under .eth: ${d.name}`);
    }
    const wrapped = labels.length > 2 || parents.has(d.name) || secondLevel++ % 2 === 0;
    const reverseVia = d.reverse
      ? reverses++ % 2 === 0
        ? "reverseRegistrar"
        : "defaultReverseRegistrar"
      : null;
    out.set(d.name, { wrapped, reverseVia });
  }
  return out;
}

function parentOf(name: string): string {
  return name.slice(name.indexOf(".") + 1);
}

/** Resolver setters for native ENS records, to run through `multicall`. */
export function resolverCalls(node: Hex, records: ReadonlyArray<readonly [string, string]>): Hex[] {
  const calls: Hex[] = [];
  for (const [key, value] of records) {
    if (key.startsWith("addr.")) {
      const coinType = BigInt(key.slice(5));
      if (coinType === 60n && isAddress(value, { strict: false })) {
        calls.push(callData("PublicResolver", "setAddr", [node, value]));
      } else {
        calls.push(callData("PublicResolver", "setAddr", [node, coinType, value as Hex]));
      }
    } else if (key.startsWith("text.")) {
      calls.push(callData("PublicResolver", "setText", [node, key.slice(5), value]));
    } else if (key === "contenthash") {
      calls.push(callData("PublicResolver", "setContenthash", [node, value as Hex]));
    } else if (key.startsWith("dns.")) {
      calls.push(callData("PublicResolver", "setDNSRecords", [node, value as Hex]));
    } else {
      throw new AppError("INVALID_PARAMETER", `unknown ENS native record key ${key}`);
    }
  }
  return calls;
}

function recordsTx(
  resolver: Hex,
  node: Hex,
  records: ReadonlyArray<readonly [string, string]>,
  label: string,
): TxRequest[] {
  const calls = resolverCalls(node, [...recordMap(records)]);
  if (calls.length === 0) return [];
  let bytes = 0;
  for (const c of calls) bytes += (c.length - 2) / 2;
  return [
    {
      to: resolver,
      data: callData("PublicResolver", "multicall", [calls]),
      gas: 1_000_000n + BigInt(calls.length) * 120_000n + BigInt(bytes) * 2_000n,
      label,
    },
  ];
}

/**
 * ENS: registration through the controller (2LD) or the NameWrapper (subname) with the initial
 * records, then transfers along the history, a `clearRecords` + new records when the history
 * has a reset, and the reverse record.
 */
export function planEnsDomain(d: SeedDomain, a: EnsAddresses, choice: EnsChoice): SeedStep[] {
  const labels = d.name.split(".");
  const node = namehash(d.name);
  const owners = ownerChain(d);
  const at = toSeconds(d.registeredAt);
  const tag = `ENS ${d.name}`;
  const register: TxRequest[] = [];
  let requires: string | undefined;

  if (labels.length === 2) {
    if (d.expiresAt === null)
      throw new AppError("INVALID_PARAMETER", `${d.name}: a .eth name needs an expiry`);
    register.push({
      to: a.controller,
      data: callData("ETHRegistrarController", "register", [
        labels[0],
        owners[0],
        BigInt(toSeconds(d.expiresAt)),
        a.resolver,
        choice.wrapped,
      ]),
      gas: 2_000_000n,
      label: `${tag}: register`,
    });
  } else {
    requires = `NAMESPACE_C/${parentOf(d.name)}`;
    const expiry = d.expiresAt === null ? 0n : BigInt(toSeconds(d.expiresAt));
    register.push({
      to: a.nameWrapper,
      data: callData("NameWrapper", "setSubnodeRecord", [
        namehash(parentOf(d.name)),
        labels[0],
        owners[0],
        a.resolver,
        0n,
        0,
        expiry,
      ]),
      gas: 2_000_000n,
      label: `${tag}: create subname`,
    });
  }
  register.push(...recordsTx(a.resolver, node, initialRecords(d), `${tag}: records`));
  const steps: SeedStep[] = [{ at, txs: register, requires, registers: `NAMESPACE_C/${d.name}` }];

  const updates: TxRequest[] = [];
  for (let i = 1; i < owners.length; i++) {
    const [from, to] = [owners[i - 1], owners[i]];
    if (choice.wrapped) {
      updates.push({
        to: a.nameWrapper,
        data: callData("NameWrapper", "safeTransferFrom", [from, to, BigInt(node), 1n, "0x"]),
        label: `${tag}: transfer to ${to}`,
      });
    } else {
      // Mainnet semantics: moving the registrar token leaves the registry owner; reclaim sets it.
      const id = BigInt(labelhash(labels[0]));
      updates.push(
        {
          to: a.baseRegistrar,
          data: callData("BaseRegistrar", "transferFrom", [from, to, id]),
          label: `${tag}: transfer`,
        },
        {
          to: a.baseRegistrar,
          data: callData("BaseRegistrar", "reclaim", [id, to]),
          label: `${tag}: reclaim`,
        },
      );
    }
  }
  if (d.history?.resetRecordsBefore) {
    updates.push({
      to: a.resolver,
      data: callData("PublicResolver", "clearRecords", [node]),
      label: `${tag}: clear`,
    });
    updates.push(...recordsTx(a.resolver, node, d.records, `${tag}: records after reset`));
  }
  if (choice.reverseVia === "reverseRegistrar") {
    updates.push({
      to: a.reverseRegistrar,
      data: callData("ReverseRegistrar", "setNameForAddr", [d.owner, d.owner, a.resolver, d.name]),
      label: `${tag}: reverse`,
    });
  } else if (choice.reverseVia === "defaultReverseRegistrar") {
    updates.push({
      to: a.defaultReverseRegistrar,
      data: callData("DefaultReverseRegistrar", "setNameForAddr", [d.owner, d.name]),
      label: `${tag}: default reverse`,
    });
  }
  if (updates.length > 0) steps.push({ at: at + UPDATE_DELAY, txs: updates });
  return steps;
}
