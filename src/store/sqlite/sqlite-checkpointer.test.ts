import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { endianness, tmpdir } from "node:os";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeSyntheticSnapshot } from "../../../bench/support/synthetic-snapshot.js";
import { testDomain, tokenIdOf } from "../../../test/helpers/store-world.js";
import { exportSnapshot, importSnapshot } from "../snapshot.js";
import { BACKSTOP_FRAMES, WalCheckpointer } from "./sqlite-checkpointer.js";
import { openWriter } from "./sqlite-open.js";
import { createSqliteStore, type SqliteStore } from "./sqlite-store.js";

let dir: string;
const open: SqliteStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "omniname-checkpointer-"));
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function storeAt(file: string, checkpointFrames?: number): Promise<SqliteStore> {
  const s = createSqliteStore(file, { checkpointFrames });
  open.push(s);
  await s.migrate();
  return s;
}

const writerOf = (s: SqliteStore) => (s as unknown as { writer: BetterSqlite3.Database }).writer;
const autocheckpoint = (s: SqliteStore) => Number(writerOf(s).pragma("wal_autocheckpoint", { simple: true }));

/** Writes `n` domains with records, `per` to a transaction (one commit each). */
async function writeDomains(s: SqliteStore, from: number, n: number, per = 200): Promise<void> {
  for (let i = from; i < from + n; i += per)
    await s.transaction(async (tx) => {
      const batch = Array.from({ length: Math.min(per, from + n - i) }, (_, k) => {
        const name = `name-${i + k}.wallet`;
        return testDomain({ name, sld: `name-${i + k}`, tokenId: tokenIdOf(i + k + 1) });
      });
      const ids = await tx.domainMap.upsertDomains(batch);
      await tx.domainMap.replaceRecordsMany(
        ids.map((domainId, k) => ({
          domainId,
          records: [
            {
              key: "crypto.ETH.address",
              value: `0x${String(i + k).padStart(40, "0")}`,
              nativeKey: "crypto.ETH.address",
              nativeValue: `0x${String(i + k).padStart(40, "0")}`,
            },
          ],
        })),
      );
    });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("WAL checkpoints off the writer's thread", () => {
  it("starts once the WAL outgrows the threshold, checkpoints there, and keeps the writer's own as a backstop", async () => {
    const file = join(dir, "a.db");
    const s = await storeAt(file, 16);
    await writeDomains(s, 0, 3000);
    await until(() => s.backgroundCheckpoints > 0, "a background checkpoint");
    expect(autocheckpoint(s)).toBe(BACKSTOP_FRAMES);
    // Every row is there, read through the reader connection and after a reopen.
    expect(await s.domainMap.countDomains()).toBe(3000);
    await s.close();
    open.splice(0);
    // Closed cleanly, the last connection copied the WAL back and deleted it: one file.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = await storeAt(file, 16);
    expect(await again.domainMap.countDomains()).toBe(3000);
    const [d] = await again.domainMap.findDomainsByName(["name-2999.wallet"], {});
    expect(d.records).toEqual([expect.objectContaining({ key: "crypto.ETH.address" })]);
  });

  it("keeps the WAL bounded while the writer goes on without a pause (the writer's backstop)", async () => {
    const file = join(dir, "b.db");
    const writer = openWriter(file);
    writer.exec("create table t (id integer primary key, v text not null)");
    writer.exec("create index t_v on t (v)");
    const cp = new WalCheckpointer(file, writer, { frames: 16, backstopFrames: 400 });
    const insert = writer.prepare("insert into t (v) values (?)");
    const commit = writer.transaction((from: number) => {
      for (let i = from; i < from + 200; i++) insert.run(`${i}`.padStart(8, "0").repeat(64));
    });
    try {
      let walMax = 0;
      // 20,000 rows of ~0.5 KiB and their index: ~25 MB written, 100 commits back to back.
      for (let i = 0; i < 20_000; i += 200) {
        commit(i);
        cp.committed();
        walMax = Math.max(walMax, statSync(`${file}-wal`).size);
      }
      await until(() => cp.runs > 0, "a background checkpoint");
      expect(cp.running).toBe(true);
      expect(Number(writer.pragma("wal_autocheckpoint", { simple: true }))).toBe(400);
      // A commit is ~60 pages here: the WAL never holds more than the backstop and two of them.
      expect(walMax).toBeLessThan((400 + 2 * 80) * 4096);
      expect(statSync(file).size).toBeGreaterThan(10 * walMax);
    } finally {
      cp.close();
      expect(cp.running).toBe(false);
      expect(Number(writer.pragma("wal_autocheckpoint", { simple: true }))).toBe(1000);
      writer.close();
    }
    const check = openWriter(file);
    expect(check.prepare("select count(*) from t").pluck().get()).toBe(20_000);
    check.close();
  });

  it("does not hold the writer back for a reader that keeps the WAL from starting over", async () => {
    const file = join(dir, "r.db");
    const writer = openWriter(file);
    writer.exec("create table t (id integer primary key, v text not null)");
    // Were the bound's checkpoint to wait for readers, each of the ~50 commits past it would wait
    // this long (the test's 30 s would run out).
    writer.pragma("busy_timeout = 2000");
    const reader = openWriter(file);
    const cp = new WalCheckpointer(file, writer, { frames: 16, backstopFrames: 100 });
    const insert = writer.prepare("insert into t (v) values (?)");
    const commit = writer.transaction((from: number) => {
      for (let i = from; i < from + 200; i++) insert.run(`${i}`.padStart(8, "0").repeat(64));
    });
    try {
      commit(0);
      // A read transaction open on the first commit's snapshot, for the whole test.
      reader.exec("begin");
      expect(reader.prepare("select count(*) from t").pluck().get()).toBe(200);
      for (let i = 200; i < 10_000; i += 200) {
        commit(i);
        cp.committed();
      }
      // The WAL could not start over (the reader still reads the first commit's snapshot)...
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(100 * 4096 * 4);
      expect(reader.prepare("select count(*) from t").pluck().get()).toBe(200);
      reader.exec("commit");
      // ...and once the reader is gone, the next commits let it.
      for (let i = 10_000; i < 12_000; i += 200) {
        commit(i);
        cp.committed();
      }
      expect(Number(writer.pragma("busy_timeout", { simple: true }))).toBe(2000);
    } finally {
      cp.close();
      reader.close();
      writer.close();
    }
  }, 30_000);

  it("past the threshold copies back every commit, so that the next write starts the WAL over", async () => {
    const file = join(dir, "s.db");
    const writer = openWriter(file);
    writer.exec("create table t (id integer primary key, v text not null)");
    const reader = openWriter(file);
    const cp = new WalCheckpointer(file, writer, { frames: 16, backstopFrames: 100_000 });
    const insert = writer.prepare("insert into t (v) values (?)");
    const commit = writer.transaction((from: number, n: number) => {
      for (let i = from; i < from + n; i++) insert.run(`${i}`.padStart(8, "0").repeat(64));
    });
    const header = Buffer.alloc(100);
    const shm = () => {
      const fd = openSync(`${file}-shm`, "r");
      readSync(fd, header, 0, 100, 0);
      closeSync(fd);
      // mxFrame and nBackfill (walformat.html), in the host's byte order
      const u32 = (at: number) => (endianness() === "LE" ? header.readUInt32LE(at) : header.readUInt32BE(at));
      return { mxFrame: u32(16), nBackfill: u32(96) };
    };
    try {
      commit(0, 200);
      // A reader on the WAL's frames (begun before they are copied back) keeps the next write from
      // starting the WAL over: a small commit (a few pages, far fewer than the threshold's 16)
      // lands past the first one's frames.
      reader.exec("begin");
      expect(reader.prepare("select count(*) from t").pluck().get()).toBe(200);
      cp.committed();
      await until(() => cp.runs >= 1 && shm().nBackfill === shm().mxFrame, "the first commit copied back");
      commit(200, 1);
      reader.exec("commit");
      const before = shm();
      expect(before.mxFrame).toBeGreaterThanOrEqual(16);
      expect(before.mxFrame - before.nBackfill).toBeLessThan(16);
      const runs = cp.runs;
      cp.committed();
      await until(() => cp.runs > runs, "the small commit copied back");
      // All copied and no reader: the next write starts the WAL over.
      commit(201, 1);
      expect(shm().mxFrame).toBeLessThan(16);
    } finally {
      cp.close();
      reader.close();
      writer.close();
    }
  });

  it("never starts for a store whose WAL stays small", async () => {
    const s = await storeAt(join(dir, "c.db"));
    await writeDomains(s, 0, 20, 10);
    expect(s.backgroundCheckpoints).toBe(0);
    expect(autocheckpoint(s)).toBe(1000);
  });

  it("stops for a snapshot import into an empty map (which leaves WAL mode) and starts again after", async () => {
    const snapshot = join(dir, "world.jsonl");
    await writeSyntheticSnapshot(snapshot, 500, { seed: 3 });
    const s = await storeAt(join(dir, "d.db"), 16);
    // The thread runs: a map written, then emptied again.
    await writeDomains(s, 0, 3000);
    await until(() => s.backgroundCheckpoints > 0, "a background checkpoint");
    await s.transaction(async (tx) => {
      const ids = await tx.domainMap.findDomainIdsByTokens(
        "POLYGON",
        "NAMESPACE_A",
        Array.from({ length: 3000 }, (_, i) => tokenIdOf(i + 1)),
      );
      for (const id of ids.values()) await tx.domainMap.deleteDomain(id);
    });
    expect(await s.domainMap.countDomains()).toBe(0);
    const counts = await importSnapshot(s, snapshot);
    expect(counts.domains).toBe(500);
    expect(autocheckpoint(s)).toBe(1000);
    const runs = s.backgroundCheckpoints;
    await writeDomains(s, 10_000, 3000);
    await until(() => s.backgroundCheckpoints > runs, "checkpoints after the import");
    expect(await s.domainMap.countDomains()).toBe(3500);
    // The import is whole: exported again, it holds the snapshot's 500 and the 3,000 written after.
    expect((await exportSnapshot(s, join(dir, "out.jsonl"))).domains).toBe(3500);
  });
});
