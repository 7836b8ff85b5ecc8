import { type Hex, encodeAbiParameters, isAddress, keccak256, stringToHex } from "viem";
import { AppError } from "../domain/errors.js";
import { type RealEnsAddresses, realCallData, rentPriceWei } from "./real-ens.js";
import { recordMap } from "./seed-plan.js";
import { labelhash, namehash } from "./token-ids.js";
import type { TxRequest } from "./tx-sender.js";

// The transactions of the real ENS contracts' entry points (controller commit and register,
// resolver setters, multicall) with their gas and deposits: the seeding plan (seed-ens-real.ts)
// and the bulk seeding build their steps from these.

export const YEAR = 365 * 86_400;

/** PublicResolver setters for native ENS records (`multicall` / the controller's `data`). */
export function realResolverCalls(node: Hex, records: ReadonlyArray<readonly [string, string]>): Hex[] {
  const calls: Hex[] = [];
  for (const [key, value] of records) {
    if (key.startsWith("addr.")) {
      const coinType = BigInt(key.slice(5));
      if (coinType === 60n && isAddress(value, { strict: false })) {
        calls.push(realCallData("PublicResolver", "setAddr", [node, value]));
      } else {
        calls.push(realCallData("PublicResolver", "setAddr", [node, coinType, value as Hex]));
      }
    } else if (key.startsWith("text.")) {
      calls.push(realCallData("PublicResolver", "setText", [node, key.slice(5), value]));
    } else if (key === "contenthash") {
      calls.push(realCallData("PublicResolver", "setContenthash", [node, value as Hex]));
    } else if (key.startsWith("dns.")) {
      calls.push(realCallData("PublicResolver", "setDNSRecords", [node, value as Hex]));
    } else {
      throw new AppError("INVALID_PARAMETER", `unknown ENS native record key ${key}`);
    }
  }
  return calls;
}

export function callsGas(calls: readonly Hex[]): bigint {
  let bytes = 0;
  for (const c of calls) bytes += (c.length - 2) / 2;
  return 1_000_000n + BigInt(calls.length) * 150_000n + BigInt(bytes) * 2_500n;
}

/** The controller's commitment, as `ETHRegistrarController.makeCommitment` computes it. */
export function registrationCommitment(r: {
  label: string;
  owner: Hex;
  duration: bigint;
  secret: Hex;
  resolver: Hex;
  data: readonly Hex[];
  reverseRecord: boolean;
  fuses: number;
}): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: "bytes32" },
        { type: "address" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "address" },
        { type: "bytes[]" },
        { type: "bool" },
        { type: "uint16" },
      ],
      [labelhash(r.label), r.owner, r.duration, r.secret, r.resolver, r.data, r.reverseRecord, r.fuses],
    ),
  );
}

/** The deposit sent with a registration or renewal: the oracle's price plus 1 % (the rest is refunded). */
export function deposit(label: string, duration: number): bigint {
  return (rentPriceWei(label, duration) * 101n) / 100n + 1_000_000_000n;
}

/**
 * The commit and register transactions of a controller registration (also used by the bulk
 * seeding). The commit must be mined at least MIN_COMMITMENT_AGE seconds before the register.
 */
export function controllerRegistration(
  a: RealEnsAddresses,
  label: string,
  owner: Hex,
  duration: number,
  resolver: Hex,
  records: ReadonlyArray<readonly [string, string]>,
): { commit: TxRequest; register: TxRequest } {
  const node = namehash(`${label}.eth`);
  const data = realResolverCalls(node, [...recordMap(records)]);
  const secret = keccak256(stringToHex(`omniname devnet ${label}`));
  const args = {
    label,
    owner,
    duration: BigInt(duration),
    secret,
    resolver,
    data,
    reverseRecord: false,
    fuses: 0,
  };
  return {
    commit: {
      to: a.controller,
      data: realCallData("ETHRegistrarController", "commit", [registrationCommitment(args)]),
      gas: 100_000n,
      label: `ENS ${label}.eth: commit`,
    },
    register: {
      to: a.controller,
      data: realCallData("ETHRegistrarController", "register", [
        label,
        owner,
        args.duration,
        secret,
        resolver,
        data,
        false,
        0,
      ]),
      value: deposit(label, duration),
      gas: 1_500_000n + callsGas(data),
      label: `ENS ${label}.eth: register`,
    },
  };
}

export function multicall(resolver: Hex, from: Hex, calls: Hex[], label: string): TxRequest[] {
  if (calls.length === 0) return [];
  return [
    {
      from,
      to: resolver,
      data: realCallData("PublicResolver", "multicall", [calls]),
      gas: callsGas(calls),
      label,
    },
  ];
}
