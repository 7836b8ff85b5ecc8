import { type Hex, keccak256, zeroAddress } from "viem";
import type { FixtureDomain } from "../../src/devnet/fixtures.js";
import { loadRealArtifact } from "../../src/devnet/real-artifacts.js";
import { OLD_RESOLVER_RECORD } from "../../src/devnet/seed-ens-real.js";
import { labelhash, namehash } from "../../src/devnet/token-ids.js";
import { rrsetKey } from "../../src/devnet/verify-ens-real.js";
import { mapEnsRecord } from "../../src/providers/ens/ens-records.js";
import type { EnsJudgeWorld } from "./ens-judge-harness.js";

/**
 * An ENS name read straight from the real contracts with eth_call (no event decoding), at the
 * latest block or at a past one (anvil keeps every block's state): the ENS judges' view of the chain.
 */

const PARENT_CANNOT_CONTROL = 1 << 16;

export interface ChainView {
  /** The owner ENS clients show: wrapper token holder, registrant of an unwrapped .eth 2LD, else the registry owner. */
  owner: string | null;
  /** The last holder, kept by the contracts after expiry (wrapper token data, registry owner). */
  lastOwner: string;
  /** Registrar expiry (.eth 2LD), or a subname's wrapper expiry when PARENT_CANNOT_CONTROL is burnt. */
  expiresAt: number | null;
  expired: boolean;
  records: Record<string, string>;
}

export const addr = (v: unknown) => (v === undefined ? null : String(v).toLowerCase());

/** eth_call of a real ENS contract's view, undefined when it reverts (an expired registrar token's ownerOf). */
export function ensCaller(w: () => EnsJudgeWorld, block?: number) {
  return async (contract: string, address: string, fn: string, args: readonly unknown[] = []) => {
    try {
      return await w().client.readContract({
        abi: loadRealArtifact(contract).abi,
        address: address as Hex,
        functionName: fn,
        args,
        ...(block === undefined ? {} : { blockNumber: BigInt(block) }),
      });
    } catch {
      return undefined;
    }
  };
}

/** The native keys worth asking the resolver for: every key the seeding ever wrote. */
function nativeKeys(d: FixtureDomain): Map<string, string> {
  const keys = new Map<string, string>();
  for (const [k, v] of [...(d.history?.resetRecordsBefore ?? []), ...d.records, OLD_RESOLVER_RECORD])
    keys.set(k, v);
  return keys;
}

/** What the contracts hold for `d` at `block` (latest when absent); expiry judged at `nowSeconds`. */
export async function readChain(
  w: () => EnsJudgeWorld,
  d: FixtureDomain,
  nowSeconds: number,
  block?: number,
): Promise<ChainView> {
  const call = ensCaller(w, block);
  const a = w().ens;
  const node = namehash(d.name);
  const labels = d.name.split(".");
  const is2ld = labels.length === 2;
  const registryOwner = addr(await call("ENSRegistry", a.registry, "owner", [node]))!;
  const resolver = addr(await call("ENSRegistry", a.registry, "resolver", [node]))!;
  const [, fuses, wrapperExpiry] = (await call("NameWrapper", a.nameWrapper, "getData", [BigInt(node)])) as [
    string,
    number,
    bigint,
  ];
  const wrapped = registryOwner === a.nameWrapper;
  let owner: string | null;
  let lastOwner: string;
  let expiresAt: number | null = null;
  if (wrapped) {
    owner = addr(await call("NameWrapper", a.nameWrapper, "ownerOf", [BigInt(node)]));
    // The raw token word keeps the holder after the wrapper stops answering for it.
    const raw = (await call("NameWrapper", a.nameWrapper, "_tokens", [BigInt(node)])) as bigint;
    lastOwner = `0x${(raw & ((1n << 160n) - 1n)).toString(16).padStart(40, "0")}`;
    if (owner === zeroAddress) owner = null;
    if (!is2ld && (fuses & PARENT_CANNOT_CONTROL) !== 0) expiresAt = Number(wrapperExpiry);
  } else if (is2ld) {
    owner = addr(
      await call("BaseRegistrarImplementation", a.baseRegistrar, "ownerOf", [BigInt(labelhash(labels[0]))]),
    );
    lastOwner = registryOwner;
  } else {
    owner = registryOwner;
    lastOwner = registryOwner;
  }
  if (is2ld) {
    expiresAt = Number(
      await call("BaseRegistrarImplementation", a.baseRegistrar, "nameExpires", [
        BigInt(labelhash(labels[0])),
      ]),
    );
  }
  const records: Record<string, string> = {};
  if (resolver !== zeroAddress) {
    for (const [k, sample] of nativeKeys(d)) {
      let v: unknown;
      if (k.startsWith("addr."))
        v = await call("PublicResolver", resolver, "addr", [node, BigInt(k.slice(5))]);
      else if (k.startsWith("text.")) v = await call("PublicResolver", resolver, "text", [node, k.slice(5)]);
      else if (k === "contenthash") v = await call("PublicResolver", resolver, "contenthash", [node]);
      else if (k.startsWith("dns.")) {
        const { name, type } = rrsetKey(sample as Hex);
        v = await call("PublicResolver", resolver, "dnsRecord", [node, keccak256(name), type]);
      }
      const value =
        v === undefined || v === "0x" ? "" : k.startsWith("text.") ? String(v) : String(v).toLowerCase();
      if (value !== "") for (const m of mapEnsRecord(k, value)) records[m.key] = m.value;
    }
  }
  return {
    owner,
    lastOwner,
    expiresAt,
    expired: expiresAt !== null && is2ld && expiresAt <= nowSeconds,
    records,
  };
}
