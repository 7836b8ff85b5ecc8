import {
  type Abi,
  type Hex,
  type PublicClient,
  createPublicClient,
  hexToBytes,
  http,
  keccak256,
  toHex,
} from "viem";
import type { Provider } from "../domain/providers.js";
import type { SourceContracts } from "../providers/provider.js";
import { CONTRACT_NAMES, type ContractName, abiOf } from "./artifacts.js";
import { realAbi } from "./real-artifacts.js";
import type { DevnetNetworkName } from "./deploy.js";
import { ensChoices } from "./seed-ens.js";
import { type SeedDomain, type SeedWorld, recordMap, toSeconds } from "./seed-plan.js";
import { registryTokenId } from "./seed-registry.js";
import { labelhash, namehash, reverseNode } from "./token-ids.js";

export interface VerifyChain {
  network: DevnetNetworkName;
  rpcUrl: string;
  contracts: Partial<Record<Provider, SourceContracts>>;
}

/** Owner name and type of the first resource record of a DNS wire RRset (ENS `dns.<TYPE>` values). */
function rrsetKey(wire: Hex): { name: Hex; type: number } {
  const bytes = hexToBytes(wire);
  let p = 0;
  while (bytes[p] !== 0) p += bytes[p] + 1;
  return { name: toHex(bytes.subarray(0, p + 1)), type: (bytes[p + 1] << 8) | bytes[p + 2] };
}

type Read = (
  /** One of ours (artifacts.ts) or a real one (real-artifacts.ts). */
  contract: string,
  address: string,
  fn: string,
  args: readonly unknown[],
) => Promise<unknown>;

function reader(client: PublicClient): Read {
  return (contract, address, fn, args) =>
    client.readContract({
      abi: ((CONTRACT_NAMES as readonly string[]).includes(contract)
        ? abiOf(contract as ContractName)
        : realAbi(contract)) as Abi,
      address: address as Hex,
      functionName: fn,
      args,
    });
}

const lower = (v: unknown) => String(v).toLowerCase();

async function checkRegistryDomain(
  read: Read,
  d: SeedDomain,
  registry: string,
  out: string[],
): Promise<void> {
  const contract = d.provider === "NAMESPACE_A" ? "FNSRegistry" : "UNSRegistry";
  const tag = `${d.provider}/${d.network}/${d.name}`;
  const tokenId = registryTokenId(d);
  const owner = lower(await read(contract, registry, "ownerOf", [tokenId]).catch(() => "(none)"));
  // The real UNSRegistry answers the zero address for an expired name.
  const expired = contract === "UNSRegistry" && d.expiresAt !== null && d.expiresAt < Date.now();
  const wantOwner = expired ? "0x0000000000000000000000000000000000000000" : d.owner;
  if (owner !== wantOwner) out.push(`${tag}: owner ${owner}, expected ${wantOwner}`);
  const expected = recordMap(d.records);
  for (const [k] of d.history?.resetRecordsBefore ?? []) if (!expected.has(k)) expected.set(k, "");
  const keys = [...expected.keys()];
  const values = (await read(contract, registry, "getMany", [keys, tokenId])) as string[];
  keys.forEach((k, i) => {
    if (values[i] !== expected.get(k)) out.push(`${tag}: record ${k} = ${JSON.stringify(values[i])}`);
  });
  if (d.reverse) {
    const rev = (await read(contract, registry, "reverseOf", [d.owner])) as bigint;
    if (rev !== tokenId) out.push(`${tag}: reverse of ${d.owner} is token ${rev}`);
  }
  if (contract === "UNSRegistry") {
    const expiry = Number(await read(contract, registry, "expiryOf", [tokenId]));
    const want = d.expiresAt === null ? 0 : toSeconds(d.expiresAt);
    if (expiry !== want) out.push(`${tag}: expiry ${expiry}, expected ${want}`);
  }
}

async function ensRecordValue(
  read: Read,
  resolver: string,
  node: Hex,
  key: string,
  value: string,
): Promise<string> {
  if (key.startsWith("addr."))
    return lower(await read("PublicResolver", resolver, "addr", [node, BigInt(key.slice(5))]));
  if (key.startsWith("text."))
    return String(await read("PublicResolver", resolver, "text", [node, key.slice(5)]));
  if (key === "contenthash") return lower(await read("PublicResolver", resolver, "contenthash", [node]));
  if (key.startsWith("dns.")) {
    const { name, type } = rrsetKey((value || "0x0000") as Hex);
    return lower(await read("PublicResolver", resolver, "dnsRecord", [node, keccak256(name), type]));
  }
  return `(unknown key ${key})`;
}

async function checkEnsDomain(
  read: Read,
  d: SeedDomain,
  a: Record<string, string>,
  wrapped: boolean,
  reverseVia: string | null,
  out: string[],
): Promise<void> {
  const tag = `NAMESPACE_C/${d.network}/${d.name}`;
  const node = namehash(d.name);
  const labels = d.name.split(".");
  const registryOwner = lower(await read("ENSRegistry", a.registry, "owner", [node]));
  if (wrapped) {
    const owner = lower(await read("NameWrapper", a.nameWrapper, "ownerOf", [BigInt(node)]));
    if (owner !== d.owner) out.push(`${tag}: wrapped owner ${owner}, expected ${d.owner}`);
    if (registryOwner !== a.nameWrapper)
      out.push(`${tag}: registry owner ${registryOwner} is not the wrapper`);
  } else {
    const id = BigInt(labelhash(labels[0]));
    const owner = lower(await read("BaseRegistrar", a.baseRegistrar, "ownerOf", [id]).catch(() => "(none)"));
    if (owner !== d.owner) out.push(`${tag}: registrant ${owner}, expected ${d.owner}`);
    if (registryOwner !== d.owner) out.push(`${tag}: registry owner ${registryOwner}, expected ${d.owner}`);
  }
  if (labels.length === 2 && d.expiresAt !== null) {
    const expires = Number(
      await read("BaseRegistrar", a.baseRegistrar, "nameExpires", [BigInt(labelhash(labels[0]))]),
    );
    if (expires !== toSeconds(d.expiresAt))
      out.push(`${tag}: expires ${expires}, expected ${toSeconds(d.expiresAt)}`);
  }
  // Records wiped by a reset must read empty ("" for texts, 0x for bytes).
  const final = recordMap(d.records);
  const before = recordMap(d.history?.resetRecordsBefore ?? []);
  for (const k of new Set([...final.keys(), ...before.keys()])) {
    const v = final.get(k);
    const actual = await ensRecordValue(read, a.resolver, node, k, v ?? before.get(k) ?? "");
    const isText = k.startsWith("text.");
    const want = v === undefined ? (isText ? "" : "0x") : isText ? v : v.toLowerCase();
    if (actual !== want) out.push(`${tag}: record ${k} = ${JSON.stringify(actual.slice(0, 80))}`);
  }
  if (reverseVia === "reverseRegistrar") {
    const name = await read("PublicResolver", a.resolver, "name", [reverseNode(d.owner)]);
    if (name !== d.name) out.push(`${tag}: reverse name of ${d.owner} is ${JSON.stringify(name)}`);
  } else if (reverseVia === "defaultReverseRegistrar") {
    const name = await read("DefaultReverseRegistrar", a.defaultReverseRegistrar, "nameForAddr", [d.owner]);
    if (name !== d.name) out.push(`${tag}: default reverse name of ${d.owner} is ${JSON.stringify(name)}`);
  }
}

/**
 * Reads a seeded world back through the registries' view functions and lists every difference
 * (empty = the chains hold exactly the world): owners, records (including records wiped by a
 * reset), reverse records and expiries.
 */
export async function verifyWorld(chains: readonly VerifyChain[], world: SeedWorld): Promise<string[]> {
  const out: string[] = [];
  await Promise.all(
    chains.map(async (chain) => {
      const client = createPublicClient({ transport: http(chain.rpcUrl, { batch: { batchSize: 100 } }) });
      const read = reader(client as PublicClient);
      const domains = world.domains.filter((d) => d.network === chain.network);
      const choices = ensChoices(domains);
      await Promise.all(
        domains.map(async (d) => {
          const source = chain.contracts[d.provider];
          if (!source) {
            out.push(`${d.provider}/${d.network}/${d.name}: provider not deployed`);
          } else if (d.provider === "NAMESPACE_C") {
            const c = choices.get(d.name)!;
            await checkEnsDomain(read, d, source.addresses, c.wrapped, c.reverseVia, out);
          } else {
            await checkRegistryDomain(read, d, source.addresses.registry, out);
          }
        }),
      );
    }),
  );
  return out.sort();
}
