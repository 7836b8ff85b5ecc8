import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CrawlerStore } from "../../src/crawler/crawler-source.js";
import { fencedStore, LeasedSource, LeaseLostError, type SyncRun } from "../../src/crawler/source-lease.js";
import type { SourceState } from "../../src/crawler/source-progress.js";
import type { Store } from "../../src/store/store.js";
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
    const a = await store.acquireSourceLease(SRC, "a", 1_000, TTL);
    expect(a).toEqual({ sourceId: SRC, holder: "a", expiresAt: 1_000 + TTL, acquiredAt: 1_000 });
    expect((await other.acquireSourceLease(SRC, "b", 1_500, TTL)).holder).toBe("a");
    // Renewal moves the expiry and keeps the acquisition time.
    expect(await store.acquireSourceLease(SRC, "a", 2_000, TTL)).toMatchObject({
      holder: "a",
      expiresAt: 2_000 + TTL,
      acquiredAt: 1_000,
    });
    expect(await other.holdsSourceLease(SRC, "a", 2_500)).toBe(true);
    expect(await other.holdsSourceLease(SRC, "b", 2_500)).toBe(false);
    // Another source is free.
    expect((await other.acquireSourceLease("ens-ethereum", "b", 2_500, TTL)).holder).toBe("b");
    expect((await store.listSourceLeases()).map((l) => [l.sourceId, l.holder])).toEqual([
      ["ens-ethereum", "b"],
      [SRC, "a"],
    ]);
  });

  it("lets a standby take an expired lease; the old holder's renewal then sees the new one", async () => {
    await store.acquireSourceLease(SRC, "a", 1_000, TTL);
    expect((await other.acquireSourceLease(SRC, "b", 1_000 + TTL, TTL)).holder).toBe("a");
    const taken = await other.acquireSourceLease(SRC, "b", 1_001 + TTL, TTL);
    expect(taken).toMatchObject({ holder: "b", acquiredAt: 1_001 + TTL });
    expect((await store.acquireSourceLease(SRC, "a", 1_002 + TTL, TTL)).holder).toBe("b");
    expect(await store.holdsSourceLease(SRC, "a", 1_002 + TTL)).toBe(false);
  });

  it("fences writes: a stale holder's transaction is refused and rolled back, the holder's goes through", async () => {
    await store.acquireSourceLease(SRC, "a", 1_000, TTL);
    let now = 2_000;
    const asA = fencedStore(store as CrawlerStore, SRC, "a", () => now);
    await asA.transaction((tx) => tx.setCheckpoint(checkpointAt(10)));
    expect((await store.getCheckpoint(SRC))?.blockNumber).toBe(10);

    // A pauses past its lease; B takes over and writes.
    now = 1_001 + TTL;
    await other.acquireSourceLease(SRC, "b", now, TTL);
    const asB = fencedStore(other as CrawlerStore, SRC, "b", () => now);
    await asB.transaction((tx) => tx.setCheckpoint(checkpointAt(20)));

    // A wakes up: both its transaction and a lone checkpoint write are refused, nothing changes.
    await expect(
      asA.transaction(async (tx) => {
        await tx.appendJournal([]);
        await tx.setCheckpoint(checkpointAt(11));
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(asA.setCheckpoint(checkpointAt(12))).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.getCheckpoint(SRC))?.blockNumber).toBe(20);
  });

  it("refuses a holder whose own lease expired, even when nobody took it", async () => {
    await store.acquireSourceLease(SRC, "a", 1_000, TTL);
    const asA = fencedStore(store as CrawlerStore, SRC, "a", () => 1_001 + TTL);
    await expect(asA.setCheckpoint(checkpointAt(5))).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.getCheckpoint(SRC)).toBeNull();
  });

  it("releases only the holder's own lease", async () => {
    await store.acquireSourceLease(SRC, "a", 1_000, TTL);
    await other.releaseSourceLease(SRC, "b");
    expect((await store.listSourceLeases()).map((l) => l.holder)).toEqual(["a"]);
    await store.releaseSourceLease(SRC, "a");
    expect(await store.listSourceLeases()).toEqual([]);
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
    expect((await store.listSourceLeases())[0]?.holder).toBe("b");
    b.stop();
    await runB;
    expect(await store.listSourceLeases()).toEqual([]);
  });
});

describe("source lease fence on postgres", () => {
  it("holds a takeover back until the fenced transaction in flight commits", async () => {
    const backend = STORE_BACKENDS.find((b) => b.name === "postgres");
    if (!backend) throw new Error("no postgres backend");
    const { store, second, cleanup } = await backend.open();
    const other = await second();
    try {
      await store.acquireSourceLease(SRC, "a", 1_000, TTL);
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
        await tx.setCheckpoint(checkpointAt(7));
        order.push("a committed");
      });
      await fenceChecked;
      const takeover = other.acquireSourceLease(SRC, "b", 10_000, TTL).then((l) => {
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
