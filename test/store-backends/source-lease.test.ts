import pg from "pg";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CrawlerStore } from "../../src/crawler/crawler-source.js";
import { fencedStore, LeasedSource, LeaseLostError, type SyncRun } from "../../src/crawler/source-lease.js";
import type { SourceState } from "../../src/crawler/source-progress.js";
import { createStore } from "../../src/store/create-store.js";
import { PgSourceLocks, sourceLockKey } from "../../src/store/postgres/pg-source-locks.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/pg.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

const SRC = "uns-polygon";
const TTL = 3_000;

const checkpointAt = (blockNumber: number) => ({
  sourceId: SRC,
  chainId: 137,
  blockNumber,
  blockHash: `0x${blockNumber.toString(16).padStart(64, "0")}`,
  updatedAt: 1,
  state: "syncing",
  error: null,
});

/** A sync loop that writes nothing and runs until stopped: what LeasedSource starts and stops. */
function idleSync(): SyncRun & { runs: number } {
  let stop: () => void = () => {};
  const r = {
    runs: 0,
    run: () => {
      r.runs++;
      return new Promise<SourceState>((resolve) => {
        stop = () => resolve("stopped");
      });
    },
    stop: () => stop(),
    status: () => ({
      id: SRC,
      provider: "UNS",
      network: "POLYGON",
      chainId: 137,
      state: "live" as SourceState,
      head: null,
      checkpoint: 0,
      lag: null,
      eventsApplied: 0,
      eventsPerSecond: 0,
      etaSeconds: null,
      rangeSize: 1,
      error: null,
      updatedAt: 0,
    }),
  };
  return r;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

describe.each(STORE_BACKENDS)("source leases on $name", ({ open }) => {
  let store: Store;
  let other: Store;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    const s = await open();
    store = s.store;
    other = await s.second();
    cleanup = async () => {
      await other.close();
      await s.cleanup();
    };
  });
  afterEach(() => cleanup());

  it("gives a source to one holder at a time: the other sees who holds it", async () => {
    const a = await store.crawlerLog.acquireSourceLease(SRC, "a", 1_000, TTL);
    expect(a).toEqual({
      sourceId: SRC,
      holder: "a",
      expiresAt: 1_000 + TTL,
      acquiredAt: 1_000,
      head: null,
      syncedAt: null,
      reportedAt: null,
    });
    expect((await other.crawlerLog.acquireSourceLease(SRC, "b", 1_500, TTL)).holder).toBe("a");
    // Renewal moves the expiry and keeps the acquisition time.
    expect(await store.crawlerLog.acquireSourceLease(SRC, "a", 2_000, TTL)).toMatchObject({
      holder: "a",
      expiresAt: 2_000 + TTL,
      acquiredAt: 1_000,
    });
    expect(await other.crawlerLog.holdsSourceLease(SRC, "a", 2_500)).toBe(true);
    expect(await other.crawlerLog.holdsSourceLease(SRC, "b", 2_500)).toBe(false);
    // Another source is free.
    expect((await other.crawlerLog.acquireSourceLease("ens-ethereum", "b", 2_500, TTL)).holder).toBe("b");
    expect((await store.crawlerLog.listSourceLeases()).map((l) => [l.sourceId, l.holder])).toEqual([
      ["ens-ethereum", "b"],
      [SRC, "a"],
    ]);
  });

  it("lets a standby take an expired lease; the old holder's renewal then sees the new one", async () => {
    await store.crawlerLog.acquireSourceLease(SRC, "a", 1_000, TTL);
    expect((await other.crawlerLog.acquireSourceLease(SRC, "b", 1_000 + TTL, TTL)).holder).toBe("a");
    const taken = await other.crawlerLog.acquireSourceLease(SRC, "b", 1_001 + TTL, TTL);
    expect(taken).toMatchObject({ holder: "b", acquiredAt: 1_001 + TTL });
    expect((await store.crawlerLog.acquireSourceLease(SRC, "a", 1_002 + TTL, TTL)).holder).toBe("b");
    expect(await store.crawlerLog.holdsSourceLease(SRC, "a", 1_002 + TTL)).toBe(false);
  });

  it("fences writes: a stale holder's transaction is refused and rolled back, the holder's goes through", async () => {
    await store.crawlerLog.acquireSourceLease(SRC, "a", 1_000, TTL);
    let now = 2_000;
    const asA = fencedStore(store as CrawlerStore, SRC, "a", () => now);
    await asA.transaction((tx) => tx.crawlerLog.setCheckpoint(checkpointAt(10)));
    expect((await store.crawlerLog.getCheckpoint(SRC))?.blockNumber).toBe(10);

    // A pauses past its lease; B takes over and writes.
    now = 1_001 + TTL;
    await other.crawlerLog.acquireSourceLease(SRC, "b", now, TTL);
    const asB = fencedStore(other as CrawlerStore, SRC, "b", () => now);
    await asB.transaction((tx) => tx.crawlerLog.setCheckpoint(checkpointAt(20)));

    // A wakes up: both its transaction and a lone checkpoint write are refused, nothing changes.
    await expect(
      asA.transaction(async (tx) => {
        await tx.crawlerLog.appendJournal([]);
        await tx.crawlerLog.setCheckpoint(checkpointAt(11));
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(asA.crawlerLog.setCheckpoint(checkpointAt(12))).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.crawlerLog.getCheckpoint(SRC))?.blockNumber).toBe(20);
  });

  it("refuses a holder whose own lease expired, even when nobody took it", async () => {
    await store.crawlerLog.acquireSourceLease(SRC, "a", 1_000, TTL);
    const asA = fencedStore(store as CrawlerStore, SRC, "a", () => 1_001 + TTL);
    await expect(asA.crawlerLog.setCheckpoint(checkpointAt(5))).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.crawlerLog.getCheckpoint(SRC)).toBeNull();
  });

  it("releases only the holder's own lease", async () => {
    await store.crawlerLog.acquireSourceLease(SRC, "a", 1_000, TTL);
    await other.crawlerLog.releaseSourceLease(SRC, "b");
    expect((await store.crawlerLog.listSourceLeases()).map((l) => l.holder)).toEqual(["a"]);
    await store.crawlerLog.releaseSourceLease(SRC, "a");
    expect(await store.crawlerLog.listSourceLeases()).toEqual([]);
  });

  it("runs the sync loop in one of two processes; the standby takes over when the writer stops", async () => {
    const log = pino({ level: "silent" });
    const opts = { ttlMs: 400, renewMs: 40 };
    const syncA = idleSync();
    const syncB = idleSync();
    const a = new LeasedSource(SRC, store as CrawlerStore, () => syncA, { ...opts, holder: "a" }, log);
    const b = new LeasedSource(SRC, other as CrawlerStore, () => syncB, { ...opts, holder: "b" }, log);
    const runA = a.run();
    await until(() => a.lease().role === "writer", "a to write");
    const runB = b.run();
    await until(() => b.lease().holder === "a", "b to see a");
    expect(b.lease()).toEqual({ holder: "a", role: "standby" });
    expect(b.status().state).toBe("standby");
    expect(syncB.runs).toBe(0);

    a.stop();
    expect(await runA).toBe("stopped");
    await until(() => b.lease().role === "writer", "b to take over");
    expect(syncB.runs).toBe(1);
    expect((await store.crawlerLog.listSourceLeases())[0]?.holder).toBe("b");
    b.stop();
    await runB;
    expect(await store.crawlerLog.listSourceLeases()).toEqual([]);
  });
  it("reports on its row the head it sees and since when the index holds what the chain had", async () => {
    const log = pino({ level: "silent" });
    let now = 1_000;
    const progress = { head: 10 as number | null, checkpoint: 5 };
    const sync = idleSync();
    const base = sync.status;
    sync.status = () => ({ ...base(), ...progress });
    const a = new LeasedSource(
      SRC,
      store as CrawlerStore,
      () => sync,
      { holder: "a", ttlMs: 60_000, renewMs: 20, clock: () => now },
      log,
    );
    const run = a.run();
    const reportAt = async (t: number) => {
      for (let i = 0; i < 400; i++) {
        const [row] = await other.crawlerLog.listSourceLeases();
        if (row?.reportedAt === t) return row;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no report at ${t}`);
    };
    // Behind from the start: never seen in sync.
    expect(await reportAt(1_000)).toMatchObject({ head: 10, syncedAt: null });
    // The index reached the head seen at 1,000 while the chain moved on: in sync as of 1,000.
    now = 2_000;
    Object.assign(progress, { head: 12, checkpoint: 10 });
    expect(await reportAt(2_000)).toMatchObject({ head: 12, syncedAt: 1_000 });
    // Caught up: in sync now.
    now = 3_000;
    progress.checkpoint = 12;
    expect(await reportAt(3_000)).toMatchObject({ head: 12, syncedAt: 3_000 });
    a.stop();
    await run;
  });
});

describe("source lease fence on postgres", () => {
  it("holds a takeover back until the fenced transaction in flight commits", async () => {
    const backend = STORE_BACKENDS.find((b) => b.name === "postgres");
    if (!backend) throw new Error("no postgres backend");
    const { store, second, cleanup } = await backend.open();
    const other = await second();
    try {
      await store.crawlerLog.acquireSourceLease(SRC, "a", 1_000, TTL);
      const order: string[] = [];
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let checked: () => void = () => {};
      const fenceChecked = new Promise<void>((r) => {
        checked = r;
      });
      const asA = fencedStore(store as CrawlerStore, SRC, "a", () => 2_000);
      const writing = asA.transaction(async (tx) => {
        checked();
        await gate;
        await tx.crawlerLog.setCheckpoint(checkpointAt(7));
        order.push("a committed");
      });
      await fenceChecked;
      const takeover = other.crawlerLog.acquireSourceLease(SRC, "b", 10_000, TTL).then((l) => {
        order.push(`takeover by ${l.holder}`);
      });
      await new Promise((r) => setTimeout(r, 200));
      release();
      await Promise.all([writing, takeover]);
      expect(order).toEqual(["a committed", "takeover by b"]);
    } finally {
      await other.close();
      await cleanup();
    }
  });
});

describe("source leases with advisory locks on postgres", () => {
  const log = pino({ level: "silent" });
  let db: { url: string; drop: () => Promise<void> };
  let store: Store;
  let other: Store;
  let admin: pg.Client;
  const running: LeasedSource[] = [];
  beforeEach(async () => {
    db = await createTestDatabase();
    store = await createStore({ databaseUrl: db.url, dataDir: "/nonexistent" });
    other = await createStore({ databaseUrl: db.url, dataDir: "/nonexistent" });
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterEach(async () => {
    for (const s of running.splice(0)) s.stop();
    await admin.end();
    await other.close();
    await store.close();
    await db.drop();
  });

  const locksOf = (s: Store) => {
    if (!(s.sourceLocks instanceof PgSourceLocks)) throw new Error("no advisory locks on postgres");
    return s.sourceLocks;
  };
  const advisoryLocks = async () =>
    Number(
      (
        await admin.query<{ n: string }>(
          `select count(*) as n from pg_locks where locktype = 'advisory' and granted
             and database = (select oid from pg_database where datname = current_database())`,
        )
      ).rows[0]?.n,
    );
  const leased = (s: Store, holder: string, sync: SyncRun, ttlMs: number, renewMs: number) => {
    const l = new LeasedSource(
      SRC,
      s as CrawlerStore,
      () => sync,
      { holder, ttlMs, renewMs, locks: s.sourceLocks },
      log,
    );
    running.push(l);
    return l;
  };

  it("derives a stable, distinct 64-bit key per source", () => {
    expect(sourceLockKey(SRC)).toBe(sourceLockKey(SRC));
    expect(sourceLockKey(SRC)).not.toBe(sourceLockKey("ens-ethereum"));
    const k = BigInt(sourceLockKey(SRC));
    expect(k >= -(2n ** 63n) && k < 2n ** 63n).toBe(true);
  });

  it("keeps the source with the lock holder even after its row expired: the lock wins", async () => {
    // A renews far less often than its TTL: its row expires while its lock (it is alive) holds.
    const a = leased(store, "a", idleSync(), 100, 60_000);
    const runA = a.run();
    await until(() => a.lease().role === "writer", "a to write");
    expect(await advisoryLocks()).toBe(1);
    const syncB = idleSync();
    const b = leased(other, "b", syncB, 100, 40);
    const runB = b.run();
    await until(() => b.lease().holder === "a", "b to see a");
    await new Promise((r) => setTimeout(r, 400));
    // The row is long expired, yet B stands by: it cannot take A's lock.
    expect((await store.crawlerLog.listSourceLeases())[0]?.expiresAt).toBeLessThan(Date.now());
    expect(b.lease()).toEqual({ holder: "a", role: "standby" });
    expect(syncB.runs).toBe(0);
    expect(await locksOf(other).tryLock(SRC)).toBe(false);
    a.stop();
    b.stop();
    await Promise.all([runA, runB]);
  });

  it("hands the source over well before the row's TTL once the writer's lock session is terminated", async () => {
    const TTL_LONG = 60_000;
    const a = leased(store, "a", idleSync(), TTL_LONG, 40);
    const runA = a.run();
    await until(() => a.lease().role === "writer", "a to write");
    const syncB = idleSync();
    const b = leased(other, "b", syncB, TTL_LONG, 40);
    const runB = b.run();
    await until(() => b.lease().holder === "a", "b to see a");
    expect(syncB.runs).toBe(0);

    // The writer's lock connection dies (as with a kill -9): the server frees its lock at once.
    const pid = await locksOf(store).backendPid();
    expect(pid).not.toBeNull();
    await admin.query("select pg_terminate_backend($1)", [pid]);
    // B takes the row though it is far from expired (until() gives up after 10 s of a 60 s TTL).
    await until(() => b.lease().role === "writer", "b to take over");
    expect(syncB.runs).toBe(1);
    const [row] = await store.crawlerLog.listSourceLeases();
    expect(row?.holder).toBe("b");
    // A dropped to standby; its fenced writes are refused (the row is B's).
    await until(() => a.lease().role === "standby", "a to stand by");
    await expect(
      fencedStore(store as CrawlerStore, SRC, "a", Date.now).crawlerLog.setCheckpoint(checkpointAt(3)),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // Its next try (a standby's, one renewal later) reads who holds the source now.
    await until(() => a.lease().holder === "b", "a to see b");
    a.stop();
    b.stop();
    await Promise.all([runA, runB]);
  });

  it("releases the lock and the row on a clean stop", async () => {
    const a = leased(store, "a", idleSync(), 60_000, 40);
    const runA = a.run();
    await until(() => a.lease().role === "writer", "a to write");
    expect(locksOf(store).holds(SRC)).toBe(true);
    expect(await advisoryLocks()).toBe(1);
    a.stop();
    expect(await runA).toBe("stopped");
    expect(locksOf(store).holds(SRC)).toBe(false);
    expect(await advisoryLocks()).toBe(0);
    expect(await store.crawlerLog.listSourceLeases()).toEqual([]);
    // The lock is free for another process at once.
    expect(await locksOf(other).tryLock(SRC)).toBe(true);
    await locksOf(other).unlock(SRC);
  });
});
