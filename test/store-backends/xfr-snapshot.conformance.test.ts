import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { XfrZones } from "../../src/dns/xfr-zones.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

const APEX = { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test" };

/**
 * A zone transfer is a consistent snapshot at one serial while the crawler writes: every name
 * written in the same transaction as the checkpoint that makes the serial is in the version of
 * that serial, and no later one is.
 */
describe.each(STORE_BACKENDS)("zone transfers read one snapshot: $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
  });
  afterAll(async () => {
    await cleanup();
  });

  /** One crawler-like transaction: name k with its record, and the checkpoint at block k. */
  async function write(k: number): Promise<void> {
    await store.transaction(async (tx) => {
      const id = await tx.domainMap.upsertDomain(
        testDomain({ tokenId: tokenIdOf(5000 + k), name: `w${k}.wallet`, sld: `w${k}`, tld: "wallet" }),
      );
      await tx.domainMap.replaceRecords(id, [
        { key: "record.A.0", value: `10.1.${k >> 8}.${k & 255}`, nativeKey: "a", nativeValue: "a" },
      ]);
      await tx.crawlerLog.setCheckpoint({
        sourceId: "snap",
        chainId: 1,
        blockNumber: k,
        blockHash: `0x${k}`,
        updatedAt: 1,
        state: "live",
        error: null,
      });
    });
  }

  it("readSnapshot: reads inside it do not see a commit made meanwhile", async () => {
    await write(1);
    const seen = await store.readSnapshot(async (snap) => {
      const before = (await snap.crawlerLog.listCheckpoints()).find(
        (c) => c.sourceId === "snap",
      )!.blockNumber;
      await write(2);
      const after = (await snap.crawlerLog.listCheckpoints()).find((c) => c.sourceId === "snap")!.blockNumber;
      const names = (await snap.domainMap.findDomainsByName(["w2.wallet"], {})).length;
      // The name scan too (PostgreSQL: a COPY on another connection, on the exported snapshot).
      let scanned = 0;
      for await (const page of snap.domainMap.iterateDomainsByName(1))
        scanned += page.filter((d) => d.name === "w2.wallet").length;
      return { before, after, names, scanned };
    });
    expect(seen).toEqual({ before: 1, after: 1, names: 0, scanned: 0 });
    expect((await store.domainMap.findDomainsByName(["w2.wallet"], {})).length).toBe(1);
  });

  it("every version read while names are written holds exactly the names of its serial", async () => {
    const zones = new XfrZones({ store, ranker: createScoringRanker(), apex: APEX, clock: Date.now });
    const versions: Array<{ serial: number; names: string[] }> = [];
    let writing = true;
    const writer = (async () => {
      for (let k = 3; k <= 60; k++) {
        await write(k);
        // A crawler's pace: the reads below interleave with the writes.
        await new Promise((r) => setTimeout(r, 3));
      }
      writing = false;
    })();
    while (writing) {
      await zones.refresh();
      const z = zones.zone("wallet");
      if (z !== null) versions.push({ serial: z.apex.soa.serial, names: [...z.nodes.keys()] });
      await new Promise((r) => setTimeout(r, 5));
    }
    await writer;
    await zones.refresh();
    const last = zones.zone("wallet")!;
    versions.push({ serial: last.apex.soa.serial, names: [...last.nodes.keys()] });
    expect(new Set(versions.map((v) => v.serial)).size).toBeGreaterThan(2);
    for (const v of versions) {
      const want = Array.from({ length: v.serial }, (_, i) => `w${i + 1}.wallet`).sort();
      expect([...v.names].sort(), `serial ${v.serial}`).toEqual(want);
    }
    expect(last.apex.soa.serial).toBe(60);
  }, 60_000);
});
