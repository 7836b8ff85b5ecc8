import type { KyselyPlugin } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DomainWithRecords } from "../../src/domain/types.js";
import {
  findDomainsByName,
  findDomainsByOwner,
  withRecords,
} from "../../src/store/kysely/domain-map.queries.js";
import { type Db, type DomainRow, MAX_IN, toDomain } from "../../src/store/kysely/rows.js";
import type { KyselyBacked } from "../helpers/raw-db.js";
import { ALICE, BOB, STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

/*
 * The lookups resolve and reverse-resolve make on a cold cache: the domains and their records in
 * one statement (one round trip to PostgreSQL, not two), answering exactly what the two-statement
 * form (the domains, then `withRecords`) answers.
 */

/** `db` with every statement it runs counted. */
function counting(db: Db): { db: Db; statements: () => number } {
  let n = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    // Once a statement run (transformQuery also sees each subquery as it is built).
    transformResult: async (args) => {
      n++;
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), statements: () => n };
}

/** The two-statement answer: the oracle. */
async function twoStatements(
  db: Db,
  where: "name" | "owner",
  values: string[],
): Promise<DomainWithRecords[]> {
  const rows = await db.selectFrom("domains").selectAll().where(where, "in", values).orderBy("id").execute();
  return withRecords(
    db,
    rows.map((r) => toDomain(r as DomainRow)),
  );
}

describe.each(STORE_BACKENDS)("cold lookups on $name", ({ open }) => {
  let opened: Awaited<ReturnType<(typeof STORE_BACKENDS)[number]["open"]>>;
  let db: Db;
  beforeAll(async () => {
    opened = await open();
    const store = opened.store;
    db = (store as unknown as KyselyBacked).db;
    // alice.wallet in two namespaces (a collision), records written out of key order; a domain
    // without records; Bob's names on two networks.
    const a = await store.domainMap.upsertDomain(testDomain());
    await store.domainMap.replaceRecords(a, [
      { key: "crypto.ETH.address", value: ALICE, nativeKey: "crypto.ETH.address", nativeValue: ALICE },
      { key: "browser.redirect_url", value: "https://a.example", nativeKey: "url", nativeValue: "x" },
      { key: "crypto.BTC.address", value: "bc1q", nativeKey: "crypto.BTC.address", nativeValue: "bc1q" },
    ]);
    const b = await store.domainMap.upsertDomain(
      testDomain({ provider: "NAMESPACE_B", tokenId: tokenIdOf(2) }),
    );
    await store.domainMap.replaceRecords(b, [
      { key: "crypto.ETH.address", value: BOB, nativeKey: "crypto.ETH.address", nativeValue: BOB },
    ]);
    await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(3), name: "bare.wallet", sld: "bare", owner: BOB }),
    );
    const c = await store.domainMap.upsertDomain(
      testDomain({
        network: "ETHEREUM",
        tokenId: tokenIdOf(4),
        name: "bob.eth",
        sld: "bob",
        tld: "eth",
        owner: BOB,
      }),
    );
    await store.domainMap.replaceRecords(c, [
      { key: "text.email", value: "b@example.com", nativeKey: "email", nativeValue: "b@example.com" },
    ]);
  });
  afterAll(async () => {
    await opened?.cleanup();
  });

  it("reads names, their collisions and their records in one statement", async () => {
    const names = ["alice.wallet", "bare.wallet", "absent.wallet", "bob.eth"];
    const c = counting(db);
    const got = await findDomainsByName(c.db, names, {});
    expect(c.statements()).toBe(1);
    expect(got).toEqual(await twoStatements(db, "name", names));
    expect(got.map((d) => d.name)).toEqual(["alice.wallet", "alice.wallet", "bare.wallet", "bob.eth"]);
    expect(got[0].records.map((r) => r.key)).toEqual([
      "browser.redirect_url",
      "crypto.BTC.address",
      "crypto.ETH.address",
    ]);
    expect(got[2].records).toEqual([]);
  });

  it("narrows by network and provider, and answers nothing for a NUL or an empty list", async () => {
    const byProvider = await findDomainsByName(db, ["alice.wallet"], { provider: "NAMESPACE_B" });
    expect(byProvider.map((d) => [d.provider, d.records.length])).toEqual([["NAMESPACE_B", 1]]);
    expect(await findDomainsByName(db, ["alice.wallet"], { network: "ETHEREUM" })).toEqual([]);
    expect(await findDomainsByName(db, ["alice.wallet\u0000"], {})).toEqual([]);
    expect(await findDomainsByName(db, [], {})).toEqual([]);
  });

  it("reads an owner's domains with their records in one statement", async () => {
    const c = counting(db);
    const got = await findDomainsByOwner(c.db, BOB, {});
    expect(c.statements()).toBe(1);
    expect(got).toEqual(await twoStatements(db, "owner", [BOB]));
    expect(got.map((d) => d.name)).toEqual(["bare.wallet", "bob.eth"]);
    expect((await findDomainsByOwner(db, BOB, { network: "ETHEREUM" })).map((d) => d.records.length)).toEqual(
      [1],
    );
    expect(await findDomainsByOwner(db, "0x0000000000000000000000000000000000000001", {})).toEqual([]);
  });

  it("reads more names than one statement binds, in id order", async () => {
    const names = [
      ...Array.from({ length: MAX_IN + 20 }, (_, i) => `filler-${i}.wallet`),
      "bob.eth",
      "alice.wallet",
    ];
    const c = counting(db);
    const got = await findDomainsByName(c.db, names, {});
    expect(c.statements()).toBe(2);
    expect(got.map((d) => d.name)).toEqual(["alice.wallet", "alice.wallet", "bob.eth"]);
    expect(got).toEqual(await twoStatements(db, "name", ["alice.wallet", "bob.eth"]));
  });
});
