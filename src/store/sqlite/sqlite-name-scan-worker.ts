import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { DomainWithRecords } from "../../domain/types.js";
import {
  type ByNameOptions,
  DOMAIN_READ_COLUMNS,
  recordKeyCondition,
  toDomainWithRecords,
} from "../kysely/domain-map-scans.queries.js";

/**
 * Pages the worker reads ahead of the caller at most (a page of 250 domains is ~0.2 MB of text);
 * once there, it sleeps until the caller has taken half of them. Enough to ride out either
 * thread being descheduled for a while on a busy machine: with 4, each page waited for a wake-up.
 */
const AHEAD = 32;

/**
 * The worker's code (plain CommonJS, run with `eval`: the same under tsx, vitest and the build).
 * It reads the pages of `scanDomainsByName` on a read-only connection of its own and posts each
 * as one JSON text (an array of rows, each an array of DOMAIN_READ_COLUMNS then the records' tuples),
 * which SQLite writes and the caller parses in one `JSON.parse`: a string crosses threads as one
 * copy. A shared counter of pages posted and not yet taken holds it back (Atomics.wait).
 */
const WORKER = `
const { parentPort, workerData: w } = require("node:worker_threads");
const Database = require(w.module);
const ahead = new Int32Array(w.ahead);
let db = null;
try {
  db = new Database(w.file, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  db.pragma("mmap_size = " + w.mmapBytes);
  db.pragma("cache_size = -" + w.cacheKiB);
  const first = db.prepare(w.select + " order by d.name, d.id limit ?").raw(true);
  const next = db.prepare(w.select + " where d.name > ? order by d.name, d.id limit ?").raw(true);
  const whole = db.prepare(w.select + " where d.name = ? order by d.id").raw(true);
  let after = null;
  for (;;) {
    if (Atomics.load(ahead, 0) >= w.max)
      for (let n = Atomics.load(ahead, 0); n > w.max / 2; n = Atomics.load(ahead, 0)) Atomics.wait(ahead, 0, n);
    const rows = after === null ? first.all(w.pageSize) : next.all(after, w.pageSize);
    if (rows.length === 0) break;
    after = rows[rows.length - 1][0];
    let cut = rows.length;
    // A full page without its last name's rows: that name may go on past the page (withoutLastName).
    if (rows.length >= w.pageSize) {
      cut = rows.length - 1;
      while (cut > 0 && rows[cut - 1][0] === after) cut--;
    }
    const texts = [];
    for (let i = 0; i < cut; i++) texts.push(rows[i][1]);
    if (cut < rows.length) for (const r of whole.all(after)) texts.push(r[1]);
    if (texts.length === 0) continue;
    Atomics.add(ahead, 0, 1);
    parentPort.postMessage("[" + texts.join(",") + "]");
  }
  parentPort.postMessage(null);
} catch (e) {
  // The driver's code (SQLITE_BUSY, SQLITE_CANTOPEN …) crosses too: the store reads it (sqlite-unavailable.ts).
  parentPort.postMessage({ error: String(e && e.message || e), code: e && typeof e.code === "string" ? e.code : undefined });
} finally {
  if (db !== null) db.close();
}
`;

/**
 * `scanDomainsByName` (the same pages, in the same order) read on a worker thread: the SQLite
 * statements run on the second core while the caller works on the page before (the zone export:
 * about half its CPU each, bench/HISTORY.md). Each page is one statement, as in the scan it
 * replaces; a caller that stops early ends the worker.
 */
export async function* scanDomainsByNameInWorker(
  file: string,
  read: { mmapBytes: number; pageCacheBytes: number },
  pageSize: number,
  opts: ByNameOptions = {},
): AsyncGenerator<DomainWithRecords[]> {
  const recs = `(select json_group_array(json_array(r.key, r.value, r.native_key, r.native_value) order by r.key)
    from records r where r.domain_id = d.id${recordKeyCondition(opts.recordKeys, "sqlite")})`;
  const select = `select d.name, json_array(${DOMAIN_READ_COLUMNS.map((c) => `d.${c}`).join(", ")}, json(${recs})) from domains d`;
  const ahead = new SharedArrayBuffer(4);
  const counter = new Int32Array(ahead);
  const worker = new Worker(WORKER, {
    eval: true,
    // Its heap holds a few pages: a small young generation keeps the process's RSS down.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
    workerData: {
      module: createRequire(import.meta.url).resolve("better-sqlite3"),
      file,
      mmapBytes: Math.max(0, Math.floor(read.mmapBytes)),
      cacheKiB: Math.max(0, Math.floor(read.pageCacheBytes / 1024)),
      select,
      pageSize,
      max: AHEAD,
      ahead,
    },
  });
  const queue: unknown[] = [];
  let wake: (() => void) | null = null;
  const push = (m: unknown) => {
    queue.push(m);
    wake?.();
    wake = null;
  };
  worker.on("message", push);
  worker.on("error", (e) => push({ error: e.message }));
  worker.on("exit", () => push(null));
  try {
    for (;;) {
      if (queue.length === 0) await new Promise<void>((r) => (wake = r));
      const m = queue.shift();
      if (m === null) return;
      if (typeof m !== "string") {
        const { error, code } = m as { error: string; code?: string };
        throw Object.assign(new Error(`zone scan worker: ${error}`), { code });
      }
      // The worker sleeps only once AHEAD pages wait: wake it when half have been taken.
      if (Atomics.sub(counter, 0, 1) - 1 <= AHEAD / 2) Atomics.notify(counter, 0);
      yield (JSON.parse(m) as unknown[][]).map((a) =>
        toDomainWithRecords(a, a[DOMAIN_READ_COLUMNS.length] as string[][]),
      );
    }
  } finally {
    await worker.terminate();
  }
}
