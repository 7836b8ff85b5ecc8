import type { Network } from "../../../src/domain/networks.js";
import type { Provider } from "../../../src/domain/providers.js";
import type { DomainRecord } from "../../../src/domain/types.js";
import type { Store } from "../../../src/store/store.js";

/**
 * A small local world for the API tests, written straight through the store port (canonical
 * records). It holds the cases the endpoints must tell apart: a three-way collision, an ENS name
 * reached through its ENSIP-15 form, punycode, expired and CSAM-failing names, primary names, a
 * stale reverse record that forward verification must drop.
 */
export const T0 = Date.UTC(2024, 0, 1);
export const NOW = Date.UTC(2025, 0, 1);

export const ADDR = {
  alice: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  bob: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  carol: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
  dave: "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
  nobody: "0x000000000000000000000000000000000000dead",
} as const;

export interface WorldDomain {
  key: string;
  provider: Provider;
  network: Network;
  name: string;
  owner: string;
  score: number;
  registeredAt: number;
  expiresAt?: number | null;
  spam?: boolean;
  csamOk?: boolean;
  kyc?: boolean;
  tags?: string[];
  records?: Record<string, string>;
  /** The owner's reverse record on this (network, provider) names this domain. */
  reverseOf?: string;
}

const CONTRACT: Record<Provider, string> = {
  NAMESPACE_A: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
  NAMESPACE_B: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
  NAMESPACE_C: "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
  NAMESPACE_D: "0x0000000000000000000000000000000000000000",
};

export const WORLD: WorldDomain[] = [
  {
    key: "alice-fns-polygon",
    provider: "NAMESPACE_A",
    network: "POLYGON",
    name: "alice.wallet",
    owner: ADDR.alice,
    score: 80,
    registeredAt: T0,
    kyc: true,
    records: {
      "token.ETH.0": ADDR.alice,
      "redirect.WEBSITE.0": "https://alice.example.com",
      "record.A.10": "192.0.2.10",
      "record.A.2": "192.0.2.2",
      "record.A.0": "192.0.2.1",
      "record.TXT.0": "https://alice.example.com/verify",
      "profile.OWNER.fullname": "Alice Example",
    },
    reverseOf: ADDR.alice,
  },
  {
    key: "alice-uns-ethereum",
    provider: "NAMESPACE_B",
    network: "ETHEREUM",
    name: "alice.wallet",
    owner: ADDR.bob,
    score: 60,
    registeredAt: T0 + 1000,
    records: { "token.ETH.0": ADDR.bob },
  },
  {
    key: "alice-fns-bsc",
    provider: "NAMESPACE_A",
    network: "BSC",
    name: "alice.wallet",
    owner: ADDR.carol,
    score: 60,
    registeredAt: T0 + 2000,
  },
  {
    key: "bob-ens",
    provider: "NAMESPACE_C",
    network: "ETHEREUM",
    name: "bob.eth",
    owner: ADDR.bob,
    score: 70,
    registeredAt: T0 + 3000,
    records: { "token.ETH.0": ADDR.bob, "profile.OWNER.fullname": "Bob" },
    reverseOf: ADDR.bob,
  },
  {
    key: "bob-uns",
    provider: "NAMESPACE_B",
    network: "POLYGON",
    name: "bob.crypto",
    owner: ADDR.bob,
    score: 50,
    registeredAt: T0 + 4000,
  },
  {
    key: "apple-uns",
    provider: "NAMESPACE_B",
    network: "POLYGON",
    name: "apple.crypto",
    owner: ADDR.bob,
    score: 50,
    registeredAt: T0 + 4500,
  },
  {
    key: "cafe-ens",
    provider: "NAMESPACE_C",
    network: "ETHEREUM",
    name: "café.eth",
    owner: ADDR.carol,
    score: 65,
    registeredAt: T0 + 5000,
  },
  {
    key: "expired-ens",
    provider: "NAMESPACE_C",
    network: "ETHEREUM",
    name: "expired.eth",
    owner: ADDR.carol,
    score: 65,
    registeredAt: T0 + 6000,
    expiresAt: T0 + 10_000,
  },
  {
    key: "csam-fns",
    provider: "NAMESPACE_A",
    network: "POLYGON",
    name: "blocked.wallet",
    owner: ADDR.carol,
    score: 90,
    registeredAt: T0 + 7000,
    csamOk: false,
  },
  {
    key: "spam-fns",
    provider: "NAMESPACE_A",
    network: "AURORA",
    name: "spammy.wallet",
    owner: ADDR.dave,
    score: 5,
    registeredAt: T0 + 8000,
    spam: true,
    tags: ["lookalike"],
  },
  {
    // Carol's reverse record names this domain, but Dave owns it now: not forward-verified.
    key: "stale-reverse",
    provider: "NAMESPACE_B",
    network: "ETHEREUM",
    name: "sold.crypto",
    owner: ADDR.dave,
    score: 40,
    registeredAt: T0 + 9000,
    reverseOf: ADDR.carol,
  },
];

function tokenId(i: number): string {
  return `0x${(i + 1).toString(16).padStart(64, "0")}`;
}

/** Writes the world through the store port; returns the store id of each domain by key. */
export async function seedWorld(
  store: Store,
  world: readonly WorldDomain[] = WORLD,
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const [i, d] of world.entries()) {
    const dot = d.name.lastIndexOf(".");
    const id = await store.domainMap.upsertDomain({
      provider: d.provider,
      network: d.network,
      tokenId: tokenId(i),
      name: d.name,
      sld: d.name.slice(0, dot),
      tld: d.name.slice(dot + 1),
      owner: d.owner,
      contractAddress: CONTRACT[d.provider],
      resolver: null,
      registeredAt: d.registeredAt,
      registeredBlock: i + 1,
      expiresAt: d.expiresAt ?? null,
      lastUpdateBlock: i + 10,
      lastUpdateAt: d.registeredAt + 123,
      baseScore: d.score,
      spam: d.spam ?? false,
      csamOk: d.csamOk ?? true,
      kyc: d.kyc ?? false,
      tags: d.tags ?? [],
    });
    ids.set(d.key, id);
    const records: DomainRecord[] = Object.entries(d.records ?? {}).map(([key, value]) => ({
      key,
      value,
      nativeKey: key,
      nativeValue: value,
    }));
    if (records.length > 0) await store.domainMap.replaceRecords(id, records);
  }
  for (const d of world) {
    if (d.reverseOf === undefined) continue;
    await store.domainMap.setReverse({
      network: d.network,
      provider: d.provider,
      address: d.reverseOf,
      domainId: ids.get(d.key)!,
    });
  }
  return ids;
}
