import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { exportSnapshot, importSnapshot } from "../../src/store/snapshot.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/pg.js";

const ALICE = "0x00000000000000000000000000000000000a11ce";

async function dump(store: Store): Promise<string[]> {
  const lines: string[] = [];
  for await (const page of store.iterateDomains(100)) {
    for (const { id, ...d } of page) lines.push(JSON.stringify(d));
  }
  lines.push(
    ...(await store.findReverse(ALICE, {})).map((r) => `reverse ${r.address} ${r.network} ${r.provider}`),
  );
  lines.push(...(await store.listCheckpoints()).map((c) => JSON.stringify(c)));
  lines.push(...(await store.findJournalAfter("src", -1)).map((j) => JSON.stringify(j)));
  return lines.sort();
}

describe("snapshot export and import", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-snap-"));
  let source: Store;
  let pg: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    source = await createStore({ dataDir: join(dir, "a") });
    pg = await createTestDatabase();
    for (let i = 0; i < 1234; i++) {
      const id = await source.upsertDomain({
        provider: i % 2 ? "NAMESPACE_A" : "NAMESPACE_B",
        network: "POLYGON",
        tokenId: `0x${i.toString(16).padStart(64, "0")}`,
        name: `n${i}.wallet`,
        sld: `n${i}`,
        tld: "wallet",
        owner: ALICE,
        contractAddress: "0xc0",
        resolver: null,
        registeredAt: 1000 + i,
        registeredBlock: i,
        expiresAt: i === 7 ? 5 : null,
        lastUpdateBlock: i,
        lastUpdateAt: 2000 + i,
        baseScore: i % 100,
        spam: i === 3,
        csamOk: true,
        kyc: false,
        tags: i === 3 ? ["spam:test"] : [],
      });
      await source.replaceRecords(id, [
        {
          key: "record.A.0",
          value: `10.0.0.${i % 250}`,
          nativeKey: "dns.A",
          nativeValue: `["10.0.0.${i % 250}"]`,
        },
        {
          key: "profile.OWNER.fullname",
          value: "Ünïcode 🚀",
          nativeKey: "profile.OWNER.fullname",
          nativeValue: "Ünïcode 🚀",
        },
      ]);
      if (i < 3)
        await source.setReverse({
          network: "POLYGON",
          provider: i % 2 ? "NAMESPACE_A" : "NAMESPACE_B",
          address: ALICE,
          domainId: id,
        });
    }
    await source.appendJournal([
      {
        sourceId: "src",
        chainId: 137,
        blockNumber: 1,
        blockHash: "0x1",
        logIndex: 0,
        txHash: "0xt",
        contract: "0xc",
        tokenId: "0x01",
        event: "{}",
        blockTime: 1_700_000_000,
      },
    ]);
    await source.setCheckpoint({
      sourceId: "src",
      chainId: 137,
      blockNumber: 9,
      blockHash: "0x9",
      updatedAt: 1,
      state: "syncing",
      error: null,
    });
  });

  afterAll(async () => {
    await source.close();
    await pg.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("round-trips the whole map from SQLite to PostgreSQL and back to SQLite unchanged", async () => {
    const file = join(dir, "snap.jsonl");
    const exported = await exportSnapshot(source, file);
    expect(exported).toEqual({ domains: 1234, records: 2468, reverse: 2, journal: 1, checkpoints: 1 });

    const target = await createStore({ databaseUrl: pg.url, dataDir: dir });
    expect(await importSnapshot(target, file)).toEqual(exported);
    expect(await dump(target)).toEqual(await dump(source));
    // Importing twice changes nothing: upserts by token id, journal positions are unique.
    await importSnapshot(target, file);
    expect(await target.countDomains()).toBe(1234);

    const file2 = join(dir, "snap2.jsonl");
    await exportSnapshot(target, file2);
    const again = await createStore({ dataDir: join(dir, "c") });
    await importSnapshot(again, file2);
    expect(await dump(again)).toEqual(await dump(source));
    await target.close();
    await again.close();
  });

  it("without the journal, exports no checkpoints so a new node re-crawls instead of resuming blind", async () => {
    const file = join(dir, "nojournal.jsonl");
    expect(await exportSnapshot(source, file, { journal: false })).toMatchObject({
      journal: 0,
      checkpoints: 0,
    });
  });

  it.each([
    ["an empty file", "", /empty file/],
    ["a file that is not a snapshot", '{"type":"header","format":"other"}\n', /not an omniname snapshot/],
    [
      "a future version",
      '{"type":"header","format":"omniname-snapshot","version":99}\n',
      /unsupported version/,
    ],
    [
      "a line that is not JSON",
      '{"type":"header","format":"omniname-snapshot","version":1}\n{nope\n',
      /line 2: not JSON/,
    ],
    [
      "an unknown provider",
      '{"type":"header","format":"omniname-snapshot","version":1}\n{"type":"domain","provider":"X","network":"BSC"}\n',
      /line 2: unknown provider/,
    ],
    [
      "an unknown line type",
      '{"type":"header","format":"omniname-snapshot","version":1}\n{"type":"what"}\n',
      /unknown line type/,
    ],
  ])("refuses %s with the line number", async (_label, content, message) => {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, content);
    const store = await createStore({ dataDir: join(dir, "bad") });
    await expect(importSnapshot(store, file)).rejects.toThrow(message);
    expect(await store.countDomains()).toBe(0);
    await store.close();
  });
});
