import { splitName } from "../domain/names.js";
import type { DomainRecord } from "../domain/types.js";
import { adapterFor, mapNativeRecords } from "../providers/adapters.js";
import { ENS_MAINNET } from "../providers/ens/ens.adapter.js";
import { FNS_MAINNET } from "../providers/fns/fns.adapter.js";
import { UNS_MAINNET } from "../providers/uns/uns.adapter.js";
import type { Store } from "../store/store.js";
import type { FixtureDomain, FixtureWorld } from "./fixtures.js";

/** The registry that holds a fixture's token on mainnet: what `smartContractAddress` reports. */
function contractOf(d: FixtureDomain): string {
  if (d.provider === "NAMESPACE_A")
    return FNS_MAINNET[d.network as keyof typeof FNS_MAINNET].addresses.registry;
  if (d.provider === "NAMESPACE_B")
    return UNS_MAINNET[d.network as keyof typeof UNS_MAINNET].addresses.registry;
  // .eth second-level names are ERC-721 tokens of the BaseRegistrar; subnames live in the registry.
  const ens = ENS_MAINNET.ETHEREUM.addresses;
  return d.name.split(".").length === 2 ? ens.baseRegistrar : ens.registry;
}

/** The canonical records of a fixture, mapped from its native records as the crawler maps them. */
export function fixtureRecords(d: FixtureDomain): DomainRecord[] {
  const out = new Map<string, DomainRecord>();
  for (const [nativeKey, nativeValue] of d.records) {
    for (const m of mapNativeRecords(d.provider, nativeKey, nativeValue)) {
      out.set(m.key, { key: m.key, value: m.value, nativeKey, nativeValue });
    }
  }
  return [...out.values()];
}

/**
 * Writes the fixture world straight into a store (no chain): the embedded demo before the first
 * crawl, and the test world of API and scoring tests. Token ids and record mapping come from the
 * provider adapters, so the result matches what a crawl of the seeded devnet produces. Base
 * signals are left at their defaults; callers rescore (jobs/rescore.job.ts) afterwards.
 */
export async function importFixtures(
  store: Pick<Store, "domainMap" | "transaction">,
  world: FixtureWorld,
): Promise<{ domains: number }> {
  let count = 0;
  await store.transaction(async (tx) => {
    let block = 1;
    for (const d of world.domains) {
      const adapter = adapterFor(d.provider);
      if (!adapter) continue;
      const { sld, tld } = splitName(d.name);
      const id = await tx.domainMap.upsertDomain({
        provider: d.provider,
        network: d.network,
        tokenId: adapter.tokenIdOf(d.name),
        name: d.name,
        sld,
        tld,
        owner: d.owner,
        contractAddress: contractOf(d),
        resolver: null,
        registeredAt: d.registeredAt,
        registeredBlock: block,
        expiresAt: d.expiresAt,
        lastUpdateBlock: block,
        lastUpdateAt: d.registeredAt,
        baseScore: 50,
        spam: false,
        csamOk: true,
        kyc: false,
        tags: [],
      });
      block++;
      await tx.domainMap.replaceRecords(id, fixtureRecords(d));
      if (d.reverse)
        await tx.domainMap.setReverse({
          network: d.network,
          provider: d.provider,
          address: d.owner,
          domainId: id,
        });
      count++;
    }
  });
  return { domains: count };
}
