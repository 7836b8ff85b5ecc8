import { closeSync, openSync, readSync, statSync } from "node:fs";
import { endianness } from "node:os";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";

/**
 * The WAL's length in frames (pages) past which each commit is copied back by the thread, and the
 * WAL file's size that starts the thread: SQLite's own automatic checkpoint threshold
 * (`wal_autocheckpoint`, 1000 pages).
 */
export const CHECKPOINT_FRAMES = 1000;
/**
 * The WAL's bound while the checkpointer runs, 16,384 pages (64 MiB at 4 KiB). SQLite starts the
 * WAL over only when a write transaction begins after every frame was copied back; a writer that
 * never pauses keeps the checkpointer one commit behind, and the WAL would grow with the data. A
 * commit that leaves the WAL this long runs a RESTART checkpoint itself (it waits for the thread's
 * checkpoint, copies the rest, and lets the next transaction write from the WAL's start): the
 * writer is held back only when the thread cannot keep up. The writer's own automatic checkpoint
 * stays on at the same length, for a commit the checkpointer was not told of.
 */
export const BACKSTOP_FRAMES = 16_384;
/** How long `stop` waits for a checkpoint under way to end (one checkpoint: well under a second). */
const STOP_WAIT_MS = 30_000;

/** ctl indexes: nudges posted, stop asked, worker done, checkpoints run, who checkpoints. */
const NUDGES = 0;
const STOP = 1;
const DONE = 2;
const RUNS = 3;
const STATE = 4;
/** STATE: nobody checkpoints; the thread does; the writer does (a RESTART at the bound). */
const IDLE = 0;
const THREAD = 1;
const WRITER = 2;

/**
 * The worker's code (plain CommonJS, run with `eval`: the same under tsx, vitest and the build).
 * It sleeps on the shared counter until the writer's thread posts a commit; then, when the WAL
 * holds at least `frames` frames and some are not yet copied back (the WAL-index header's mxFrame
 * and the checkpoint info's nBackfill, read from the `-shm` file as walformat.html lays them out),
 * it runs one PASSIVE checkpoint on a connection of its own: it never waits for readers or the
 * writer. Past `frames`, every commit is copied back (not only each `frames` new ones): SQLite
 * starts the WAL over at the first write that finds it all copied, as its own checkpoints let it.
 */
const WORKER = `
const { workerData: w } = require("node:worker_threads");
const fs = require("node:fs");
const ctl = new Int32Array(w.ctl);
let db = null;
let shm = null;
try {
  const Database = require(w.module);
  db = new Database(w.file, { fileMustExist: true });
  db.pragma("busy_timeout = 0");
  db.pragma("synchronous = NORMAL");
  const check = db.prepare("pragma wal_checkpoint(PASSIVE)");
  const header = Buffer.alloc(100);
  const le = require("node:os").endianness() === "LE";
  const u32 = (at) => (le ? header.readUInt32LE(at) : header.readUInt32BE(at));
  let seen = 0;
  for (;;) {
    Atomics.wait(ctl, ${NUDGES}, seen);
    seen = Atomics.load(ctl, ${NUDGES});
    if (Atomics.load(ctl, ${STOP}) !== 0) break;
    if (shm === null) shm = fs.openSync(w.file + "-shm", "r");
    // mxFrame: offset 16 of the header; nBackfill: offset 96 (after the header's two copies).
    if (fs.readSync(shm, header, 0, 100, 0) !== 100) continue;
    const mxFrame = u32(16);
    const nBackfill = u32(96);
    if (mxFrame < w.frames || nBackfill >= mxFrame) continue;
    // SQLite lets one connection checkpoint at a time and does not wait for another's (SQLITE_BUSY):
    // the writer's RESTART at the bound takes its turn through STATE.
    if (Atomics.compareExchange(ctl, ${STATE}, ${IDLE}, ${THREAD}) !== ${IDLE}) continue;
    try {
      check.get();
      Atomics.add(ctl, ${RUNS}, 1);
    } finally {
      Atomics.store(ctl, ${STATE}, ${IDLE});
      Atomics.notify(ctl, ${STATE});
    }
  }
} catch (e) {
  // The writer's own automatic checkpoint takes over (WalCheckpointer: exit).
} finally {
  try {
    if (shm !== null) fs.closeSync(shm);
    if (db !== null) db.close();
  } finally {
    Atomics.store(ctl, ${DONE}, 1);
    Atomics.notify(ctl, ${DONE});
  }
}
`;

/**
 * Runs a SQLite store's WAL checkpoints on a thread of its own instead of inside the writer's
 * commits. With `wal_autocheckpoint` the commit that crosses the threshold copies the WAL's pages
 * into the database file and syncs it before it returns: a crawler part (thousands of pages)
 * paid for that on the writing thread, ~20 % of the writer's wall time (bench/HISTORY.md,
 * "Checkpoints off the writer"). Here the writer only appends to the WAL; after each commit it
 * wakes the checkpointer, which copies the pages while the writer goes on, on the other core.
 *
 * Started on the first commit that leaves the WAL file larger than CHECKPOINT_FRAMES pages (a
 * store that never writes much never starts a thread). While it runs, a commit that finds the WAL
 * at BACKSTOP_FRAMES runs the RESTART that bounds it (see there); if the thread fails, the writer's
 * default automatic checkpoint (1000 pages) comes back. A database not in WAL mode (`:memory:`, a
 * bulk load's rollback journal) never starts one.
 */
export class WalCheckpointer {
  private worker: Worker | null = null;
  private ctl: Int32Array | null = null;
  private paused = 0;
  private failed = false;
  private closed = false;
  private shm: number | null = null;
  private readonly header = Buffer.alloc(20);
  /** Checkpoints of the threads stopped before this one. */
  private pastRuns = 0;

  constructor(
    private readonly file: string,
    private readonly writer: BetterSqlite3.Database,
    private readonly opts: { frames?: number; backstopFrames?: number } = {},
  ) {}

  /** Checkpoints run off the writer's thread so far (tests, diagnostics). */
  get runs(): number {
    return this.pastRuns + (this.ctl === null ? 0 : Atomics.load(this.ctl, RUNS));
  }

  get running(): boolean {
    return this.worker !== null;
  }

  /** After each commit of the writer: wakes the thread (a few hundred nanoseconds). */
  committed(): void {
    if (this.paused > 0 || this.failed || this.closed) return;
    if (this.worker === null && !this.start()) return;
    const ctl = this.ctl as Int32Array;
    if (this.walFrames() >= (this.opts.backstopFrames ?? BACKSTOP_FRAMES)) this.restart(ctl);
    Atomics.add(ctl, NUDGES, 1);
    Atomics.notify(ctl, NUDGES);
  }

  /** The bound: waits for the thread's checkpoint under way, then runs a RESTART checkpoint. */
  private restart(ctl: Int32Array): void {
    const deadline = performance.now() + STOP_WAIT_MS;
    while (Atomics.compareExchange(ctl, STATE, IDLE, WRITER) !== IDLE) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      Atomics.wait(ctl, STATE, THREAD, left);
    }
    // Without waiting for readers: a long read (a zone export in another process) keeps the WAL
    // from starting over whatever the writer does, and the writer must not stall on it for its
    // busy timeout at every commit. RESTART then copies what it can, as PASSIVE would.
    const timeout = this.writer.pragma("busy_timeout", { simple: true });
    try {
      this.writer.pragma("busy_timeout = 0");
      this.writer.pragma("wal_checkpoint(RESTART)");
    } catch {
      // the next commit tries again
    } finally {
      this.writer.pragma(`busy_timeout = ${Number(timeout)}`);
      Atomics.store(ctl, STATE, IDLE);
    }
  }

  /** Frames in the WAL since it last started over (mxFrame, offset 16 of the WAL-index header). */
  private walFrames(): number {
    try {
      this.shm ??= openSync(`${this.file}-shm`, "r");
      if (readSync(this.shm, this.header, 0, 20, 0) !== 20) return 0;
      return endianness() === "LE" ? this.header.readUInt32LE(16) : this.header.readUInt32BE(16);
    } catch {
      return 0;
    }
  }

  /**
   * Stops the thread and closes its connection before the caller needs the database to itself
   * (leaving WAL mode); `resume` lets the next commit start it again. Synchronous.
   */
  pause(): void {
    this.paused++;
    this.stop();
  }

  resume(): void {
    if (this.paused > 0) this.paused--;
  }

  /** Ends the thread for good (the store closes). */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private start(): boolean {
    const frames = this.opts.frames ?? CHECKPOINT_FRAMES;
    if (!this.walLarger(frames)) return false;
    try {
      const ctl = new Int32Array(new SharedArrayBuffer(5 * 4));
      const worker = new Worker(WORKER, {
        eval: true,
        // It holds a statement and a 100-byte buffer: the smallest heap.
        resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
        workerData: {
          module: createRequire(import.meta.url).resolve("better-sqlite3"),
          file: this.file,
          frames,
          ctl: ctl.buffer,
        },
      });
      worker.unref();
      worker.on("error", () => this.exited(worker));
      worker.on("exit", () => this.exited(worker));
      this.worker = worker;
      this.ctl = ctl;
      this.writer.pragma(`wal_autocheckpoint = ${this.opts.backstopFrames ?? BACKSTOP_FRAMES}`);
      return true;
    } catch {
      this.failed = true;
      return false;
    }
  }

  /** The WAL file (never shrunk by SQLite once grown) holds more than `frames` pages. */
  private walLarger(frames: number): boolean {
    if (this.file === ":memory:" || this.file === "") return false;
    try {
      const pageSize = Number(this.writer.pragma("page_size", { simple: true }));
      return statSync(`${this.file}-wal`).size > frames * pageSize;
    } catch {
      return false;
    }
  }

  /** A thread that ended without being asked: the writer checkpoints for itself again. */
  private exited(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = null;
    if (this.ctl !== null) this.pastRuns += Atomics.load(this.ctl, RUNS);
    this.ctl = null;
    this.failed = true;
    this.restoreWriter();
  }

  private stop(): void {
    if (this.shm !== null) closeSync(this.shm);
    this.shm = null;
    const worker = this.worker;
    const ctl = this.ctl;
    if (worker === null || ctl === null) return;
    this.worker = null;
    this.ctl = null;
    Atomics.store(ctl, STOP, 1);
    Atomics.add(ctl, NUDGES, 1);
    Atomics.notify(ctl, NUDGES);
    // Until its connection is closed (a checkpoint under way ends first).
    Atomics.wait(ctl, DONE, 0, STOP_WAIT_MS);
    this.pastRuns += Atomics.load(ctl, RUNS);
    void worker.terminate();
    this.restoreWriter();
  }

  private restoreWriter(): void {
    try {
      if (this.writer.open) this.writer.pragma("wal_autocheckpoint = 1000");
    } catch {
      // the writer is closing
    }
  }
}
