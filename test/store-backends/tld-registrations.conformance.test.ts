import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { rawDb } from "../helpers/raw-db.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

/**
 * `tld_registrations` (migration 0010) is kept by triggers on `domains`: after every kind of write
 * it equals the group-by over all domains it replaces (listTldFirstRegistrations).
 */
const T0 = 1_700_000_000_000;

type Row = { tld: string; provider: string; network: string; domains: number; first: number | null };

async function kept(store: Store): Promise<Row[]> {
  const rows = await rawDb(store)
    .selectFrom("tld_registrations")
    .select(["tld", "provider", "network", "domains", "first_registered_at as first"])
    .execute();
  return sorted(rows);
}

async function fromScratch(store: Store): Promise<Row[]> {
  const { rows } = await sql<Row>`select tld, provider, network, count(*) as domains,
    min(registered_at) as first from domains group by tld, provider, network`.execute(rawDb(store));
  return sorted(rows);
}

function sorted(rows: Array<Record<string, unknown>>): Row[] {
  return rows
    .map((r) => ({
      tld: String(r.tld),
      provider: String(r.provider),
      network: String(r.network),
      domains: Number(r.domains),
      first: r.first === null ? null : Number(r.first),
    }))
    .sort((a, b) =>
      `${a.tld} ${a.provider} ${a.network}`.localeCompare(`${b.tld} ${b.provider} ${b.network}`),
    );
}

describe.each(STORE_BACKENDS)("tld_registrations, kept by triggers: $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
  });
  afterAll(async () => {
    await cleanup();
  });
  beforeEach(async () => {
    await store.clearChainIndex();
  });

  it("follows inserts, upserts that move a domain's registration or TLD, deletes and a clear", async () => {
    const id = (n: number, name: string, registeredAt: number | null, over = {}) =>
      store.domainMap.upsertDomain(
        testDomain({
          tokenId: tokenIdOf(n),
          name,
          sld: name.split(".")[0],
          tld: name.split(".")[1],
          registeredAt,
          ...over,
        }),
      );
    const a = await id(1, "a.web3", T0 + 10);
    const b = await id(2, "b.web3", T0);
    await id(3, "c.web3", null, { provider: "NAMESPACE_B", network: "ETHEREUM" });
    await id(4, "d.web3", T0 + 20, { provider: "NAMESPACE_B", network: "ETHEREUM" });
    await id(5, "x.wallet", null);
    expect(await kept(store)).toEqual(await fromScratch(store));
    expect(await kept(store)).toContainEqual({
      tld: "web3",
      provider: "NAMESPACE_A",
      network: "POLYGON",
      domains: 2,
      first: T0,
    });

    // The same token written again with the same values, then with an earlier registration.
    await id(1, "a.web3", T0 + 10);
    await id(1, "a.web3", T0 - 5);
    expect(await kept(store)).toEqual(await fromScratch(store));
    // The first registration's domain goes: the next one becomes the first.
    await store.domainMap.deleteDomain(a);
    expect(await kept(store)).toEqual(await fromScratch(store));
    await store.domainMap.deleteDomain(b);
    // A pair's last domain goes: its row goes.
    expect((await kept(store)).some((r) => r.tld === "web3" && r.provider === "NAMESPACE_A")).toBe(false);
    expect(await kept(store)).toEqual(await fromScratch(store));

    // Many rows in one statement (the bulk paths), then the index cleared.
    await store.domainMap.upsertDomains(
      Array.from({ length: 300 }, (_, i) =>
        testDomain({
          tokenId: tokenIdOf(100 + i),
          name: `n${i}.${["web3", "wallet", "dao"][i % 3]}`,
          sld: `n${i}`,
          tld: ["web3", "wallet", "dao"][i % 3],
          registeredAt: i % 7 === 0 ? null : T0 + ((i * 37) % 101),
          provider: i % 2 === 0 ? "NAMESPACE_A" : "NAMESPACE_B",
          network: i % 2 === 0 ? "POLYGON" : "ETHEREUM",
        }),
      ),
    );
    expect(await kept(store)).toEqual(await fromScratch(store));
    const rows = await store.scoring.listTldFirstRegistrations();
    expect(rows.length).toBe((await fromScratch(store)).length);
    await store.clearChainIndex();
    expect(await kept(store)).toEqual([]);
  });
});
