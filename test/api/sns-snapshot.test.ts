import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SNS_NAMES, SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import { createStore } from "../../src/store/create-store.js";
import { exportSnapshot, importSnapshot } from "../../src/store/snapshot.js";
import type { Store } from "../../src/store/store.js";
import { dumpStore } from "../crawler/crawler-harness.js";
import { createTestDatabase } from "../helpers/pg.js";
import { type SnsEndpoint, snsPass, startSnsEndpoint } from "../helpers/sns-world.js";

/**
 * Snapshot export and import of an SNS map: the map the SNS source builds from the devnet's Solana
 * endpoint (names, base58 owners, records, primary names, the journal at slots, the checkpoint)
 * goes SQLite → PostgreSQL → SQLite and is the same map after each import; an SNS source started
 * over the imported map finds nothing to journal (the map is its memory) until a name changes.
 */
describe("snapshot export and import of an SNS map", () => {
  let sns: SnsEndpoint;
  let dir: string;
  let source: Store;
  let pg: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    sns = await startSnsEndpoint();
    dir = mkdtempSync(join(tmpdir(), "omniname-sns-snap-"));
    source = await createStore({ databaseUrl: undefined, dataDir: join(dir, "a") });
    pg = await createTestDatabase();
    await snsPass(sns, source);
    // A second slot in the journal: a transfer and a record set after the first pass.
    sns.writer.transfer("dave.sol", SNS_WALLETS.eve as Address);
    sns.writer.setRecordV2("eve.sol", "twitter", new Uint8Array(Buffer.from("eve_on_sol")));
    await snsPass(sns, source);
  });
  afterAll(async () => {
    await source?.close();
    await pg?.drop();
    await sns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("round-trips the map from SQLite to PostgreSQL and back unchanged", async () => {
    const before = await dumpStore(source);
    expect(before.filter((l) => l.startsWith("domain ")).length).toBeGreaterThanOrEqual(SNS_NAMES.length);
    expect(
      before.some((l) => l.startsWith("reverse SOLANA/NAMESPACE_D/") && l.includes(SNS_WALLETS.alice)),
    ).toBe(true);
    const file = join(dir, "sns.jsonl");
    const exported = await exportSnapshot(source, file);
    expect(exported.journal).toBeGreaterThan(exported.domains);

    const target = await createStore({ databaseUrl: pg.url, dataDir: dir });
    try {
      expect(await importSnapshot(target, file)).toEqual(exported);
      expect(await dumpStore(target)).toEqual(before);
      const file2 = join(dir, "sns2.jsonl");
      await exportSnapshot(target, file2);
      const again = await createStore({ databaseUrl: undefined, dataDir: join(dir, "c") });
      try {
        await importSnapshot(again, file2);
        expect(await dumpStore(again)).toEqual(before);
        // The SNS source over the imported map: nothing to journal, then exactly the change.
        const resumed = await snsPass(sns, again);
        expect([resumed.stats.changed, resumed.stats.released]).toEqual([0, 0]);
        sns.writer.transfer("eve.sol", SNS_WALLETS.alice as Address);
        expect((await resumed.sync.scanOnce()).changed).toBe(1);
        const [eve] = await again.domainMap.findDomainsByName(["eve.sol"], { network: "SOLANA" });
        expect(eve?.owner).toBe(SNS_WALLETS.alice);
      } finally {
        await again.close();
      }
    } finally {
      await target.close();
    }
  });
});
