import { type Hex, type PublicClient, hexToBytes, keccak256, toHex, zeroAddress } from "viem";
import { GRACE_PERIOD, type RealEnsAddresses } from "./real-ens.js";
import { loadRealArtifact } from "./real-artifacts.js";
import { OLD_RESOLVER_RECORD, type RealEnsChoice } from "./seed-ens-real.js";
import { type SeedDomain, recordMap, toSeconds } from "./seed-plan.js";
import { labelhash, namehash, reverseNode } from "./token-ids.js";

/** Reads a view function of a real ENS contract (undefined when it reverts). */
export type RealRead = (
  contract: string,
  address: string,
  fn: string,
  args?: readonly unknown[],
) => Promise<unknown>;

export function realReader(client: PublicClient): RealRead {
  return (contract, address, fn, args = []) =>
    client
      .readContract({ abi: loadRealArtifact(contract).abi, address: address as Hex, functionName: fn, args })
      .catch(() => undefined);
}

/** Owner name and type of the first resource record of a DNS wire RRset (ENS `dns.<TYPE>` values). */
export function rrsetKey(wire: Hex): { name: Hex; type: number } {
  const bytes = hexToBytes(wire);
  let p = 0;
  while (bytes[p] !== 0) p += bytes[p] + 1;
  return { name: toHex(bytes.subarray(0, p + 1)), type: (bytes[p + 1] << 8) | bytes[p + 2] };
}

const lower = (v: unknown) => (v === undefined ? "(reverted)" : String(v).toLowerCase());

/** A native ENS record as the resolver returns it (lower-case hex for bytes, text as is). */
export async function readEnsRecord(
  read: RealRead,
  resolver: string,
  node: Hex,
  key: string,
  sample: string,
) {
  if (key.startsWith("addr."))
    return lower(await read("PublicResolver", resolver, "addr", [node, BigInt(key.slice(5))]));
  if (key.startsWith("text."))
    return String(await read("PublicResolver", resolver, "text", [node, key.slice(5)]));
  if (key === "contenthash") return lower(await read("PublicResolver", resolver, "contenthash", [node]));
  if (key.startsWith("dns.")) {
    const { name, type } = rrsetKey((sample || "0x0000") as Hex);
    return lower(await read("PublicResolver", resolver, "dnsRecord", [node, keccak256(name), type]));
  }
  return `(unknown key ${key})`;
}

/**
 * Checks one seeded ENS domain against the real contracts' view functions: the owner (wrapper
 * token holder, or registrant and registry owner when unwrapped; nobody once expired past the
 * grace period), the registrar expiry, the current resolver and its records (records wiped by a
 * reset read empty; the old resolver of a resolver change still holds its stale record), and
 * the primary name.
 */
export async function checkRealEnsDomain(
  read: RealRead,
  d: SeedDomain,
  a: RealEnsAddresses,
  choice: RealEnsChoice,
  out: string[],
  now = Math.floor(Date.now() / 1000),
): Promise<void> {
  const tag = `NAMESPACE_C/${d.network}/${d.name}`;
  const node = namehash(d.name);
  const labels = d.name.split(".");
  const released = d.expiresAt !== null && labels.length === 2 && toSeconds(d.expiresAt) + GRACE_PERIOD < now;
  const inGrace = d.expiresAt !== null && labels.length === 2 && !released && toSeconds(d.expiresAt) < now;
  const registryOwner = lower(await read("ENSRegistry", a.registry, "owner", [node]));
  if (choice.wrapped) {
    const owner = lower(await read("NameWrapper", a.nameWrapper, "ownerOf", [BigInt(node)]));
    const want = released ? zeroAddress : d.owner;
    if (owner !== want) out.push(`${tag}: wrapped owner ${owner}, expected ${want}`);
    if (registryOwner !== a.nameWrapper)
      out.push(`${tag}: registry owner ${registryOwner} is not the wrapper`);
  } else {
    const id = BigInt(labelhash(labels[0]));
    const owner = lower(await read("BaseRegistrarImplementation", a.baseRegistrar, "ownerOf", [id]));
    const want = released || inGrace ? "(reverted)" : d.owner;
    if (owner !== want) out.push(`${tag}: registrant ${owner}, expected ${want}`);
    if (registryOwner !== d.owner) out.push(`${tag}: registry owner ${registryOwner}, expected ${d.owner}`);
  }
  if (labels.length === 2 && d.expiresAt !== null) {
    const expires = Number(
      await read("BaseRegistrarImplementation", a.baseRegistrar, "nameExpires", [
        BigInt(labelhash(labels[0])),
      ]),
    );
    if (expires !== toSeconds(d.expiresAt))
      out.push(`${tag}: expires ${expires}, expected ${toSeconds(d.expiresAt)}`);
  }
  const resolver = lower(await read("ENSRegistry", a.registry, "resolver", [node]));
  if (resolver !== a.resolver) out.push(`${tag}: resolver ${resolver}, expected ${a.resolver}`);
  const final = recordMap(d.records);
  const before = recordMap(d.history?.resetRecordsBefore ?? []);
  for (const k of new Set([...final.keys(), ...before.keys()])) {
    const v = final.get(k);
    const actual = await readEnsRecord(read, a.resolver, node, k, v ?? before.get(k) ?? "");
    const isText = k.startsWith("text.");
    const want = v === undefined ? (isText ? "" : "0x") : isText ? v : v.toLowerCase();
    if (actual !== want) out.push(`${tag}: record ${k} = ${JSON.stringify(actual.slice(0, 80))}`);
  }
  if (choice.resolverChange) {
    const [k, v] = OLD_RESOLVER_RECORD;
    const stale = await readEnsRecord(read, a.oldResolver, node, k, v);
    if (stale !== v) out.push(`${tag}: the old resolver lost ${k} (${JSON.stringify(stale)})`);
    const onNew = await readEnsRecord(read, a.resolver, node, k, v);
    if (onNew !== "") out.push(`${tag}: the new resolver has ${k}`);
  }
  if (choice.reverse) {
    const rnode = reverseNode(d.owner);
    const rresolver = lower(await read("ENSRegistry", a.registry, "resolver", [rnode]));
    const name = await read("PublicResolver", rresolver, "name", [rnode]);
    if (name !== d.name) out.push(`${tag}: primary name of ${d.owner} is ${JSON.stringify(name)}`);
  }
}
