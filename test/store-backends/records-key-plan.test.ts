import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexesOf, type KyselyBacked } from "../helpers/raw-db.js";
import { STORE_BACKENDS, testDomain } from "../helpers/store-world.js";

/*
 * Records have one B-tree, their primary key (domain_id, key): migration 0027 dropped
 * `records_native` (domain_id, native_key). Every statement that picks records by domain must
 * still find them through the key, a short range per domain, and never scan the table.
 */

const BY_NATIVE_KEY = "delete from records where domain_id = 7 and native_key = 'crypto.ETH.address'";
const BY_DOMAIN = "select key, value from records where domain_id = 7 order by key";

describe.each(STORE_BACKENDS)("records on $name", ({ name, open }) => {
  let opened: Awaited<ReturnType<(typeof STORE_BACKENDS)[number]["open"]>>;
  let db: KyselyBacked["db"];
  beforeAll(async () => {
    opened = await open();
    db = (opened.store as unknown as KyselyBacked).db;
  });
  afterAll(async () => {
    await opened?.cleanup();
  });

  it("have no index but their primary key", async () => {
    const indexes = await indexesOf(db, name, "records");
    // SQLite: the table is its key's B-tree (WITHOUT ROWID), listed as no index.
    expect(indexes.map((i) => i.name)).toEqual(name === "sqlite" ? [] : ["records_pkey"]);
  });

  it("are found by their domain through the primary key, by native key too", async () => {
    for (const statement of [BY_NATIVE_KEY, BY_DOMAIN]) {
      if (name === "sqlite") {
        const plan = (
          await sql<{ detail: string }>`explain query plan ${sql.raw(statement)}`.execute(db)
        ).rows.map((r) => r.detail);
        expect(plan).toEqual(["SEARCH records USING PRIMARY KEY (domain_id=?)"]);
      } else {
        // An empty table is scanned whatever its indexes: ask which index serves it when scans cost.
        const plan = await db.connection().execute(async (c) => {
          await sql`set enable_seqscan = off`.execute(c);
          try {
            return (await sql<{ "QUERY PLAN": string }>`explain ${sql.raw(statement)}`.execute(c)).rows
              .map((r) => r["QUERY PLAN"])
              .join("\n");
          } finally {
            await sql`reset enable_seqscan`.execute(c);
          }
        });
        expect(plan).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) records_pkey/);
        expect(plan).not.toMatch(/Seq Scan/);
      }
    }
  });

  it("set by native key replace only that native key's records", async () => {
    const id = await opened.store.domainMap.upsertDomain(testDomain());
    await opened.store.domainMap.replaceRecords(id, [
      { key: "crypto.ETH.address", value: "0x1", nativeKey: "crypto.ETH.address", nativeValue: "0x1" },
      { key: "ipfs.html.value", value: "Qm1", nativeKey: "ipfs.html.value", nativeValue: "Qm1" },
    ]);
    await opened.store.domainMap.setNativeRecord(id, "ipfs.html.value", "Qm2", [
      { key: "ipfs.html.value", value: "Qm2" },
    ]);
    await opened.store.domainMap.setNativeRecord(id, "crypto.ETH.address", "", []);
    expect((await opened.store.domainMap.findRecords(id)).map((r) => [r.key, r.value])).toEqual([
      ["ipfs.html.value", "Qm2"],
    ]);
  });
});
