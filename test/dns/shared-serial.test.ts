import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTestProgress } from "../../src/dns/dns.testing.js";
import { createSharedSerial, type ZoneSerialSource } from "../../src/dns/shared-serial.js";
import { findSerialRecord } from "../../src/dns/zone-serial-record.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/pg.js";

const BACKENDS = [
  {
    name: "sqlite",
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), "omniname-shared-serial-"));
      return {
        databaseUrl: undefined,
        dataDir: dir,
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "postgres",
    open: async () => {
      const db = await createTestDatabase();
      const dir = mkdtempSync(join(tmpdir(), "omniname-shared-serial-"));
      return {
        databaseUrl: db.url,
        dataDir: dir,
        drop: async () => {
          await db.drop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

// Each store is its own connection pool, as each DNS process has: two of them on one database
// stand for two workers (or two machines of a scale-out), a third for a restart. The clock is the
// test's, so the switch instants are exact.
describe.each(BACKENDS)("the zone serial shared by every process ($name)", (backend) => {
  let db: Awaited<ReturnType<(typeof BACKENDS)[number]["open"]>>;
  const stores: Store[] = [];
  let now = 1_000_000;
  const clock = () => now;
  const open = async () => {
    const store = await createStore({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    db = await backend.open();
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await db?.drop();
  });

  it("two processes asked in turn while the index moves never answer a lower serial", async () => {
    const writer = await open();
    await setTestProgress(writer, 100);
    const a = createSharedSerial({ store: await open(), clock, delayMs: 1_000, readEveryMs: 200 });
    const b = createSharedSerial({ store: await open(), clock, delayMs: 1_000, readEveryMs: 200 });
    const ask = async (p: ZoneSerialSource) => p.current() ?? (await p.ensure());
    const seen: number[] = [];
    let block = 100;
    // 600 alternating answers over 30 s of the clock; the crawler applies a block every 150 ms,
    // and a reorg takes 30 blocks back twice. Each process reads the record every 200 ms of the
    // clock (in the background, as queries start it), so the two read it at different moments.
    for (let i = 0; i < 600; i++) {
      now += 50;
      if (i % 3 === 0) {
        block = i === 300 || i === 450 ? block - 30 : block + 1;
        await setTestProgress(writer, block);
      }
      seen.push(await ask(i % 2 === 0 ? a : b));
      // The background read a query started ends before the next query, as it would in the 50 ms.
      await new Promise((r) => setTimeout(r, 3));
    }
    const drops = seen.filter((s, i) => i > 0 && s < seen[i - 1]);
    expect(drops).toEqual([]);
    // The serial did follow the index (not stuck), and went on past each reorg.
    expect(new Set(seen).size).toBeGreaterThan(20);
    expect(seen.at(-1)).toBeGreaterThan(seen[300]);
  });

  it("a process that starts later (a restart) answers no lower than those before it", async () => {
    const before = createSharedSerial({ store: await open(), clock, delayMs: 1_000 });
    const answered = await before.ensure();
    const restarted = createSharedSerial({ store: await open(), clock, delayMs: 1_000 });
    expect(await restarted.ensure()).toBe(answered);
    const record = await findSerialRecord(stores[0].accounts);
    expect(record?.serial).toBeGreaterThanOrEqual(answered);
  });

  it("a process that could not read the record lately waits for a read, never answers from old knowledge", async () => {
    const p = createSharedSerial({ store: await open(), clock, delayMs: 1_000 });
    await p.ensure();
    now += 1_000; // a whole delay later: past what a read is trusted for
    expect(p.current()).toBeNull();
    await expect(p.ensure()).resolves.toBeTypeOf("number");
  });
});
