import { createHash } from "node:crypto";
import { splitName } from "../../../src/domain/names.js";
import type { Network } from "../../../src/domain/networks.js";
import type { Provider } from "../../../src/domain/providers.js";
import type { Store } from "../../../src/store/store.js";

export interface SeedDomain {
  provider: Provider;
  network: Network;
  name: string;
  owner: string;
  records: Array<[string, string]>;
  registeredAt: number | null;
  expiresAt: number | null;
  reverse?: boolean;
}

function tokenId(d: SeedDomain): string {
  return `0x${createHash("sha256").update(`${d.provider}/${d.network}/${d.name}`).digest("hex")}`;
}

/**
 * Writes domains through the store port as a writer would before scoring: default signals. Records
 * keep their native keys (the scoring rules only count them). Returns "PROVIDER/NETWORK/name" → id.
 */
export async function seedDomains(
  store: Store,
  domains: readonly SeedDomain[],
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const d of domains) {
    const { sld, tld } = splitName(d.name);
    const id = await store.domainMap.upsertDomain({
      provider: d.provider,
      network: d.network,
      tokenId: tokenId(d),
      name: d.name,
      sld,
      tld,
      owner: d.owner,
      contractAddress: "0x00000000000000000000000000000000000000cc",
      resolver: null,
      registeredAt: d.registeredAt,
      registeredBlock: 1,
      expiresAt: d.expiresAt,
      lastUpdateBlock: 1,
      lastUpdateAt: d.registeredAt ?? 0,
      baseScore: 50,
      spam: false,
      csamOk: true,
      kyc: false,
      tags: [],
    });
    await store.domainMap.replaceRecords(
      id,
      d.records.map(([k, v]) => ({ key: k, value: v, nativeKey: k, nativeValue: v })),
    );
    if (d.reverse)
      await store.domainMap.setReverse({
        network: d.network,
        provider: d.provider,
        address: d.owner,
        domainId: id,
      });
    ids.set(`${d.provider}/${d.network}/${d.name}`, id);
  }
  return ids;
}
