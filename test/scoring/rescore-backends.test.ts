import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildScoringIndex, rescoreAll } from "../../src/jobs/rescore.job.js";
import type { ScoringLists } from "../../src/scoring/scoring-lists.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { TEST_CSAM_TERMS } from "./helpers/scoring-fixtures.js";
import { seedDomains } from "./helpers/seed-fixtures.js";

const T0 = Date.UTC(2024, 0, 1);
const OWNER = "0x00000000000000000000000000000000000000aa";
const OTHER = "0x00000000000000000000000000000000000000bb";

describe.each(STORE_BACKENDS)("rescoring on $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  const lists = (kyc: Set<string>): ScoringLists => ({
    csamTerms: [...TEST_CSAM_TERMS],
    blocklist: { names: new Set(), tlds: new Set() },
    kycOwners: kyc,
    icannTlds: new Set(["com"]),
  });

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    await seedDomains(store, [
      // .web3: NAMESPACE_B registered a name first, NAMESPACE_A sells the TLD later.
      {
        provider: "NAMESPACE_B",
        network: "POLYGON",
        name: "first.web3",
        owner: OTHER,
        records: [],
        registeredAt: T0,
        expiresAt: null,
      },
      {
        provider: "NAMESPACE_A",
        network: "BSC",
        name: "first.web3",
        owner: OWNER,
        records: [["token.ETH.0", OWNER]],
        registeredAt: T0 + 10,
        expiresAt: null,
      },
      {
        provider: "NAMESPACE_A",
        network: "BSC",
        name: "p\u0430ypal.web3",
        owner: OTHER,
        records: [],
        registeredAt: T0 + 20,
        expiresAt: null,
      },
      {
        provider: "NAMESPACE_B",
        network: "POLYGON",
        name: "paypal.web3",
        owner: OWNER,
        records: [],
        registeredAt: null,
        expiresAt: null,
      },
      {
        provider: "NAMESPACE_A",
        network: "AURORA",
        name: "zzforbiddenzz.com",
        owner: OWNER,
        records: [],
        registeredAt: T0 + 30,
        expiresAt: null,
      },
    ]);
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it("builds the facts: origins, lookalikes; the collision index counts holders", async () => {
    const index = await buildScoringIndex(store, lists(new Set()));
    expect(index.tldOrigins.get("web3")).toEqual({
      provider: "NAMESPACE_B",
      network: "POLYGON",
      registeredAt: T0,
    });
    expect(index.tldOrigins.get("com")?.provider).toBe("NAMESPACE_A");
    expect(await store.scoring.findNameHolders(["first.web3", "paypal.web3", "nope.web3"])).toEqual(
      new Map([
        ["first.web3", 2],
        ["paypal.web3", 1],
      ]),
    );
    expect([...index.imitated]).toEqual([["p\u0430ypal.web3", "paypal.web3"]]);
  });

  it("writes the signals, then nothing on a second pass", async () => {
    await store.scoring.importKycAddresses([OWNER]);
    const kyc = await store.scoring.findKycOwners();
    expect([...kyc]).toEqual([OWNER]);
    const first = await rescoreAll(store, lists(kyc), { pageSize: 2 });
    expect(first).toMatchObject({ scanned: 5, updated: 5 });
    const byName = async (n: string) =>
      (await store.domainMap.findDomainsByName([n], {})).map((d) => [
        d.provider,
        d.baseScore,
        d.spam,
        d.csamOk,
        d.kyc,
        d.tags,
      ]);
    expect(await byName("first.web3")).toEqual([
      ["NAMESPACE_B", 75, false, true, false, ["origin-provider", "collision"]],
      ["NAMESPACE_A", 65, false, true, true, ["tld-collision:NAMESPACE_B", "collision"]],
    ]);
    expect((await byName("p\u0430ypal.web3"))[0]).toEqual([
      "NAMESPACE_A",
      10,
      true,
      true,
      false,
      [
        "tld-collision:NAMESPACE_B",
        "spam:normalization",
        "spam:mixed-script",
        "spam:confusable",
        "confusable:paypal.web3",
      ],
    ]);
    expect((await byName("zzforbiddenzz.com"))[0]).toEqual([
      "NAMESPACE_A",
      65,
      false,
      false,
      true,
      ["origin-provider", "icann-collision", "csam"],
    ]);
    expect((await rescoreAll(store, lists(kyc))).updated).toBe(0);
  });

  it("replaces the KYC list and reports what changed", async () => {
    const r = await store.scoring.importKycAddresses([OTHER], { replace: true });
    expect(r).toEqual({ added: [OTHER], removed: [OWNER], total: 1 });
    expect([...(await store.scoring.findKycOwners())]).toEqual([OTHER]);
  });
});
