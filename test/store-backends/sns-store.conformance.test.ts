import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

/**
 * SOLANA / NAMESPACE_D rows on both backends: base58 owners and reverse addresses are
 * case-sensitive (two Solana addresses may differ in case only), and the network and provider
 * filters select the SNS rows beside an FNS row of the same name.
 */
describe.each(STORE_BACKENDS)("SNS rows in the store: $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  // The same letters in another case: another (here, made-up) base58 address.
  const owner = SNS_WALLETS.alice;
  const other = owner.replace(/[a-z]/, (c) => c.toUpperCase());
  let sns: number;
  let fns: number;

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    const sol = { name: "alice.sol", sld: "alice", tld: "sol" };
    sns = await store.domainMap.upsertDomain(
      testDomain({ ...sol, provider: "NAMESPACE_D", network: "SOLANA", owner, contractAddress: owner }),
    );
    fns = await store.domainMap.upsertDomain(testDomain({ ...sol, tokenId: tokenIdOf(2) }));
    await store.domainMap.replaceRecords(sns, [
      { key: "token.SOL.0", value: owner, nativeKey: "SOL", nativeValue: owner },
    ]);
    await store.domainMap.setReverse({
      network: "SOLANA",
      provider: "NAMESPACE_D",
      address: owner,
      domainId: sns,
    });
  });
  afterAll(async () => {
    await cleanup();
  });

  it("keeps base58 owners and reverse addresses as given, case-sensitive", async () => {
    expect(other).not.toBe(owner);
    expect((await store.domainMap.findDomainsByOwner(owner, {})).map((d) => [d.id, d.owner])).toEqual([
      [sns, owner],
    ]);
    expect(await store.domainMap.findDomainsByOwner(other, {})).toEqual([]);
    expect((await store.domainMap.findReverse(owner, {})).map((r) => [r.address, r.domainId])).toEqual([
      [owner, sns],
    ]);
    expect(await store.domainMap.findReverse(other, {})).toEqual([]);
    const [d] = await store.domainMap.findDomainsByName(["alice.sol"], { network: "SOLANA" });
    expect(d.records.map((r) => r.value)).toEqual([owner]);
  });

  it("filters SNS and FNS rows of one name by network and provider", async () => {
    const ids = async (f: Parameters<Store["domainMap"]["findDomainsByName"]>[1]) =>
      (await store.domainMap.findDomainsByName(["alice.sol"], f)).map((d) => d.id).sort();
    expect(await ids({})).toEqual([sns, fns].sort());
    expect(await ids({ network: "SOLANA" })).toEqual([sns]);
    expect(await ids({ provider: "NAMESPACE_D" })).toEqual([sns]);
    expect(await ids({ provider: "NAMESPACE_A" })).toEqual([fns]);
    expect(await ids({ network: "SOLANA", provider: "NAMESPACE_A" })).toEqual([]);
  });
});
