import { createFailureStreak } from "../domain/failure-streak.js";
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { SourceLocks } from "../store/crawler-log.port.js";
import type { CrawlerStore } from "./crawler-source.js";
import type { SourceState, SourceStatus } from "./source-progress.js";
import { sleep } from "./sync-helpers.js";

/** How a crawler process holds its sources' leases (docs/operations.md, "One writer per source"). */
export interface LeaseOptions {
  /** This process's name in the lease rows: INSTANCE_ID, or hostname:pid. */
  holder: string;
  /** A lease not renewed for this long is free for a standby. */
  ttlMs: number;
  /** How often the writer renews and standbys try to take over. */
  renewMs: number;
  /**
   * PostgreSQL: per-source advisory locks (store.sourceLocks). The writer holds its source's lock
   * as long as it writes; a standby takes the lease row early only when it can take the lock
   * (the writer's session is gone), and never while another process holds it, even past the TTL.
   */
  locks?: SourceLocks | undefined;
  clock?: () => number;
}

/** The holder id of this process: `INSTANCE_ID` when set, else hostname:pid. */
export function holderIdOf(instanceId: string | undefined): string {
  return instanceId ?? `${hostname()}:${process.pid}`;
}

/** A write of a source by a process that no longer holds its lease; the transaction rolls back. */
export class LeaseLostError extends Error {
  constructor(sourceId: string, holder: string) {
    super(`the lease of ${sourceId} is no longer held by ${holder}: write refused`);
    this.name = "LeaseLostError";
  }
}

/**
 * The store as one source's writer sees it: every transaction first checks, inside itself, that
 * `holder` still holds the source's unexpired lease, and otherwise throws LeaseLostError and rolls
 * back. A writer paused past its lease (GC, SIGSTOP) thus cannot write once a standby took over.
 */
export function fencedStore(
  store: CrawlerStore,
  sourceId: string,
  holder: string,
  clock: () => number,
): CrawlerStore {
  const fenced = Object.create(store) as CrawlerStore;
  fenced.transaction = (fn) =>
    store.transaction(async (tx) => {
      if (!(await tx.crawlerLog.holdsSourceLease(sourceId, holder, clock())))
        throw new LeaseLostError(sourceId, holder);
      return fn(tx);
    });
  // A checkpoint written alone (a halt) goes through the fence too.
  fenced.crawlerLog.setCheckpoint = (c) => fenced.transaction((tx) => tx.crawlerLog.setCheckpoint(c));
  return fenced;
}

/** One run of a source's sync loop (source-sync.ts), as LeasedSource starts and stops it. */
export interface SyncRun {
  run(): Promise<SourceState>;
  stop(): void;
  status(): SourceStatus;
}

/** What /status adds per source when leases are on. */
export interface LeaseStatus {
  /** Who holds the lease (null before the first try). */
  holder: string | null;
  role: "writer" | "standby";
}

/**
 * A source's loop under a lease: standby until it takes the lease (free or expired), then writer,
 * running a fresh sync loop on a fenced store (resuming from the checkpoint) and renewing every
 * `renewMs`; a lost lease stops the loop and goes back to standby. `stop()` gives the lease up.
 * With `locks` (PostgreSQL) the source's advisory lock comes first: held, it lets this process take
 * the row before it expires (the last writer's session is gone); not held, the row is never taken,
 * and a writer whose lock session is lost stands by.
 */
export class LeasedSource {
  private current: SyncRun | null = null;
  private last: SyncRun;
  private holderNow: string | null = null;
  /** The lease's failed store calls in a row (an outage is logged when it begins and ends). */
  private readonly storeDown = createFailureStreak();
  /** The latest time (epoch ms) whose head, as this writer saw it then, is indexed: see report(). */
  private syncedAt: number | null = null;
  /** The heads this writer reported, [time, head], oldest first (only those not yet indexed, and the last that is). */
  private readonly heads: Array<[number, number]> = [];
  private readonly stopping = new AbortController();
  private readonly clock: () => number;

  constructor(
    private readonly sourceId: string,
    private readonly store: CrawlerStore,
    private readonly makeSync: (store: CrawlerStore) => SyncRun,
    private readonly options: LeaseOptions,
    private readonly log: Logger,
  ) {
    this.clock = options.clock ?? Date.now;
    // The status before this process writes: the loop as it would start, never run.
    this.last = makeSync(store);
  }

  lease(): LeaseStatus {
    return { holder: this.holderNow, role: this.current ? "writer" : "standby" };
  }

  status(): SourceStatus & { lease: LeaseStatus } {
    const s = this.last.status();
    // Before the first try the loop is starting; then standby unless it writes (or shows a halt).
    const standby = !this.current && this.holderNow !== null && s.state !== "halted";
    return { ...s, state: standby ? "standby" : s.state, lease: this.lease() };
  }

  stop(): void {
    this.stopping.abort();
    this.current?.stop();
  }

  /** Takes or renews the lease; the holder after the try, or null when the store failed. */
  private async tryAcquire(): Promise<string | null> {
    try {
      const locks = this.options.locks;
      let takeUnexpired = false;
      if (locks) {
        if (!(await locks.tryLock(this.sourceId))) {
          // Another process holds the lock (alive, if slow) or the lock connection is down: the
          // row is not ours to take, even expired. Only read who holds it.
          const l = (await this.store.crawlerLog.listSourceLeases()).find(
            (x) => x.sourceId === this.sourceId,
          );
          this.holderNow = l?.holder ?? null;
          return this.holderNow === this.options.holder ? null : this.holderNow;
        }
        // Only a standby takes an unexpired row: a writer renewing must find the row still its
        // own. Its lock may look held a moment after its session was terminated (the client has
        // not seen the end yet) while a standby already took the lock and the row.
        takeUnexpired = this.current === null;
      }
      const l = await this.store.crawlerLog.acquireSourceLease(
        this.sourceId,
        this.options.holder,
        this.clock(),
        this.options.ttlMs,
        { takeUnexpired },
      );
      this.holderNow = l.holder;
      const ended = this.storeDown.succeeded();
      if (ended !== null)
        this.log.warn({ source: this.sourceId, outageMs: ended.ms }, "source lease: the store answers again");
      if (l.holder === this.options.holder && this.current === null) {
        this.syncedAt = l.syncedAt;
        this.heads.length = 0;
      }
      if (locks && l.holder !== this.options.holder) await locks.unlock(this.sourceId);
      return l.holder;
    } catch (e) {
      // Once per outage, not every renewal (each second, each source): the return is logged too.
      if (this.storeDown.failed()) {
        this.log.warn(
          { err: e, source: this.sourceId },
          "source lease: store unavailable (tried again quietly)",
        );
      }
      return null;
    }
  }

  async run(): Promise<SourceState> {
    const signal = this.stopping.signal;
    const me = this.options.holder;
    while (!signal.aborted) {
      if ((await this.tryAcquire()) !== me) {
        await sleep(this.options.renewMs, signal);
        continue;
      }
      this.log.info({ source: this.sourceId, holder: me }, "source lease taken: writing");
      const sync = this.makeSync(fencedStore(this.store, this.sourceId, me, this.clock));
      this.current = sync;
      this.last = sync;
      let ended = false;
      const running = sync.run().finally(() => {
        ended = true;
      });
      let validUntil = this.clock() + this.options.ttlMs;
      let lost = false;
      while (!ended && !signal.aborted) {
        await Promise.race([running, sleep(this.options.renewMs, signal)]);
        if (ended || signal.aborted) break;
        // A lost lock connection (the database may already have given the lock to a standby).
        const lockLost = this.options.locks !== undefined && !this.options.locks.holds(this.sourceId);
        const holder = lockLost ? null : await this.tryAcquire();
        if (holder === me) {
          validUntil = this.clock() + this.options.ttlMs;
          await this.report(sync);
        } else if (lockLost || holder !== null || this.clock() >= validUntil) {
          this.log.warn({ source: this.sourceId, holder }, "source lease lost: standing by");
          lost = true;
          sync.stop();
          break;
        }
      }
      const state = await running;
      this.current = null;
      if (lost && !signal.aborted) {
        await this.options.locks?.unlock(this.sourceId);
        // One renewal interval before trying again: a standby that saw the lock free gets it
        // first, instead of this process taking back at once what it just lost.
        await sleep(this.options.renewMs, signal);
        continue;
      }
      // Stopped, or the loop ended by itself (exitWhenSynced): the lease is given up.
      await this.release();
      return state;
    }
    return "stopped";
  }

  /** The writer's head and sync time onto its lease row, for `/readyz` in every process. */
  private async report(sync: SyncRun): Promise<void> {
    const s = sync.status();
    const now = this.clock();
    // syncedAt: the latest time at which the head seen then is indexed now, so everything the
    // chain had at that time is in the index (docs/operations.md, "What /readyz shows").
    if (s.head !== null) this.heads.push([now, s.head]);
    let i = this.heads.length - 1;
    while (i >= 0 && this.heads[i][1] > s.checkpoint) i--;
    if (i >= 0) {
      this.syncedAt = this.heads[i][0];
      this.heads.splice(0, i);
    }
    if (this.heads.length > 3_600) this.heads.splice(0, this.heads.length - 3_600);
    await this.store.crawlerLog
      .reportSourceProgress(this.sourceId, this.options.holder, {
        head: s.head,
        syncedAt: this.syncedAt,
        now,
      })
      .catch((e: unknown) =>
        this.log.warn({ err: e, source: this.sourceId }, "source progress report failed"),
      );
  }

  private async release(): Promise<void> {
    await this.store.crawlerLog.releaseSourceLease(this.sourceId, this.options.holder).catch(() => {});
    await this.options.locks?.unlock(this.sourceId);
  }
}
