import { type Abi, type Hex, type PublicClient, createPublicClient, http } from "viem";
import type { Provider } from "../domain/providers.js";
import type { SourceContracts } from "../providers/provider.js";
import { CONTRACT_NAMES, type ContractName, abiOf } from "./artifacts.js";
import { realAbi } from "./real-artifacts.js";
import type { DevnetNetworkName } from "./deploy.js";
import { type SeedDomain, type SeedWorld, recordMap, toSeconds } from "./seed-plan.js";
import { checkOffchainEns } from "./seed-ens-offchain.js";
import { realEnsChoices } from "./seed-ens-real.js";
import { registryTokenId } from "./seed-registry.js";
import { checkRealEnsDomain, realReader } from "./verify-ens-real.js";
import type { RealEnsAddresses } from "./real-ens.js";

export interface VerifyChain {
  network: DevnetNetworkName;
  rpcUrl: string;
  contracts: Partial<Record<Provider, SourceContracts>>;
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
  const values = (await read(contract, registry, contract === "FNSRegistry" ? "getManyRecords" : "getMany", [
    keys,
    tokenId,
  ])) as string[];
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
      const choices = realEnsChoices(domains);
      await Promise.all(
        domains.map(async (d) => {
          const source = chain.contracts[d.provider];
          if (!source) {
            out.push(`${d.provider}/${d.network}/${d.name}: provider not deployed`);
          } else if (d.provider === "NAMESPACE_C") {
            const a = source.addresses as unknown as RealEnsAddresses;
            await checkRealEnsDomain(realReader(client as PublicClient), d, a, choices.get(d.name)!, out);
          } else {
            await checkRegistryDomain(read, d, source.addresses.registry, out);
          }
        }),
      );
      const ens = chain.contracts.NAMESPACE_C?.addresses;
      if (world.ensOffchain && ens?.offchainResolver) {
        const read = realReader(client as PublicClient);
        out.push(...(await checkOffchainEns(read, world.ensOffchain, ens.registry, ens.offchainResolver)));
      }
    }),
  );
  return out.sort();
}
