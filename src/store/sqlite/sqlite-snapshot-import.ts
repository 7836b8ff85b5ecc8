import { availableParallelism } from "node:os";
import type BetterSqlite3 from "better-sqlite3";
import { perConnection } from "./sqlite-open.js";
import type { Kysely } from "kysely";
import * as crawlerLog from "../kysely/crawler-log.queries.js";
import { sqliteJournalInsert } from "../kysely/journal.queries.js";
import { DOMAIN_COLUMNS, KEY_COLUMNS } from "../kysely/rows.js";
import type { Database } from "../schema.js";
import { packedParts, packedValue, sqliteColumns, unpackSqlite } from "../snapshot-encode.js";
import type { SnapshotSink, SqliteBatch } from "../snapshot-sink.port.js";
import { finishBulkLoad, leaveWal, startBulkLoad } from "./sqlite-bulk-load.js";
import { runAppendJournal, SQLITE_SET_REVERSE } from "./sqlite-bulk-writes.js";

/**
 * Snapshot import on SQLite: one transaction for the whole file, written through prepared
 * better-sqlite3 statements on the writer connection (records as multi-row inserts). Through
 * Kysely each row would cost a query build and a fresh `prepare`; here a domain with six records
 * costs a handful of microseconds.
 *
 * Into an empty map, the bulk load of snapshot-bulk-load.ts: the domains' secondary indexes, the
 * records' and reverse records' ones and the triggers on domains are dropped in the transaction,
 * rows are appended with the importer's ids, and the indexes are built by one sort each at the end.
 */

/** Record rows per multi-row insert: 5 values each, far below SQLite's 32,766 variables. */
const RECORD_ROWS = 200;

/** Domains per multi-row upsert: 20 values each. One statement per row costs ~3x as much here. */
const DOMAIN_ROWS = 50;

/**
 * Helper threads of the bulk load's index sorts (`PRAGMA threads`): one less than the cores, at
 * most 3 (each sorts runs of the page cache's size in memory).
 */
const SORT_THREADS = Math.max(0, Math.min(3, availableParallelism() - 1));

/** Domains per message of the parse worker in a bulk load (its statements run across messages). */
const BULK_MESSAGE = 100;

interface Statements {
  isEmpty: BetterSqlite3.Statement;
  insertDomains: BetterSqlite3.Statement;
  insertDomain: BetterSqlite3.Statement;
  maxId: BetterSqlite3.Statement;
  idByToken: BetterSqlite3.Statement;
  upsertDomains: BetterSqlite3.Statement;
  upsertDomain: BetterSqlite3.Statement;
  deleteRecords: BetterSqlite3.Statement;
  insertRecords: BetterSqlite3.Statement;
  insertRecord: BetterSqlite3.Statement;
  upsertReverse: BetterSqlite3.Statement;
  appendJournal: BetterSqlite3.Statement;
}

// Statements belong to their connection; the cache must not keep a closed connection alive.
const statementsOf = perConnection((db): Statements => {
  const updates = DOMAIN_COLUMNS.filter((c) => !KEY_COLUMNS.has(c))
    .map((c) => `${c} = excluded.${c}`)
    .join(", ");
  const domainRow = `(${DOMAIN_COLUMNS.map(() => "?").join(", ")})`;
  const upsert = (rows: number) =>
    db.prepare(
      `insert into domains (${DOMAIN_COLUMNS.join(", ")}) values ${Array(rows).fill(domainRow).join(", ")}
       on conflict (network, provider, token_id) do update set ${updates}`,
    );
  const recordRow = "(?, ?, ?, ?, ?)";
  const insert = (rows: number) =>
    db.prepare(
      `insert into domains (id, ${DOMAIN_COLUMNS.join(", ")}) values ${Array(rows)
        .fill(`(?, ${domainRow.slice(1)}`)
        .join(", ")}`,
    );
  const s: Statements = {
    isEmpty: db.prepare("select not exists (select 1 from domains)").pluck(),
    insertDomains: insert(DOMAIN_ROWS),
    insertDomain: insert(1),
    maxId: db.prepare("select coalesce(max(id), 0) from domains").pluck(),
    idByToken: db
      .prepare("select id from domains where network = ? and provider = ? and token_id = ?")
      .pluck(),
    upsertDomains: upsert(DOMAIN_ROWS),
    upsertDomain: upsert(1),
    deleteRecords: db.prepare("delete from records where domain_id = ?"),
    insertRecords: db.prepare(
      `insert into records (domain_id, key, value, native_key, native_value) values ${Array(RECORD_ROWS)
        .fill(recordRow)
        .join(", ")}`,
    ),
    insertRecord: db.prepare(
      `insert into records (domain_id, key, value, native_key, native_value) values ${recordRow}`,
    ),
    upsertReverse: db.prepare(SQLITE_SET_REVERSE),
    appendJournal: db.prepare(sqliteJournalInsert(1)),
  };
  return s;
});

const W = DOMAIN_COLUMNS.length;
const NETWORK = DOMAIN_COLUMNS.indexOf("network");
const PROVIDER = DOMAIN_COLUMNS.indexOf("provider");
const TOKEN_ID = DOMAIN_COLUMNS.indexOf("token_id");

/** Runs `many` on full chunks of `rows` values, then `one` on the rest, `width` values at a time. */
function runChunked(
  many: BetterSqlite3.Statement,
  one: BetterSqlite3.Statement,
  values: unknown[],
  width: number,
  rows: number,
): void {
  let i = 0;
  for (; i + rows * width <= values.length; i += rows * width) many.run(values.slice(i, i + rows * width));
  for (; i < values.length; i += width) one.run(values.slice(i, i + width));
}

/** The batch's domains upserted in batch order (new ids follow it), their records replaced. */
function writeDomains(s: Statements, b: SqliteBatch): void {
  // Ids only grow (AUTOINCREMENT): a domain whose id is at most this one was there before the
  // batch, and only such a domain has records to replace.
  const before = Number(s.maxId.get());
  runChunked(s.upsertDomains, s.upsertDomain, b.domains, W, DOMAIN_ROWS);
  const rows: unknown[] = [];
  let r = 0;
  let a = 0;
  for (let d = 0; d < b.n; d++) {
    const network = b.domains[d * W + NETWORK];
    const provider = b.domains[d * W + PROVIDER];
    const id = Number(s.idByToken.get(network, provider, b.domains[d * W + TOKEN_ID]));
    if (id <= before) s.deleteRecords.run(id);
    for (const end = r + b.recordCounts[d] * 4; r < end; r += 4)
      rows.push(id, b.records[r], b.records[r + 1], b.records[r + 2], b.records[r + 3]);
    for (const end = a + b.reverseCounts[d]; a < end; a++)
      s.upsertReverse.run(network, provider, b.reverse[a], id);
    if (rows.length >= RECORD_ROWS * 5) s.insertRecords.run(rows.splice(0, RECORD_ROWS * 5));
  }
  runChunked(s.insertRecords, s.insertRecord, rows, 5, RECORD_ROWS);
}

/** Appends a batch to an empty map: ids `next`, `next + 1`, … in batch order; returns the next. */
function appendDomains(s: Statements, b: SqliteBatch, next: number): number {
  const values: unknown[] = [];
  const rows: unknown[] = [];
  const reverses: unknown[] = [];
  let r = 0;
  let a = 0;
  for (let d = 0; d < b.n; d++) {
    const id = next + d;
    values.push(id);
    for (let k = d * W; k < (d + 1) * W; k++) values.push(b.domains[k]);
    for (const end = r + b.recordCounts[d] * 4; r < end; r += 4)
      rows.push(id, b.records[r], b.records[r + 1], b.records[r + 2], b.records[r + 3]);
    for (const end = a + b.reverseCounts[d]; a < end; a++)
      reverses.push(b.domains[d * W + NETWORK], b.domains[d * W + PROVIDER], b.reverse[a], id);
  }
  runChunked(s.insertDomains, s.insertDomain, values, W + 1, DOMAIN_ROWS);
  // Records and reverse records after their domains (foreign keys), in (domain_id, key) order: appended to their B-tree.
  runChunked(s.insertRecords, s.insertRecord, rows, 5, RECORD_ROWS);
  // Upserted: an address claimed by two domains of the file stays with the later one.
  for (let i = 0; i < reverses.length; i += 4) s.upsertReverse.run(reverses.slice(i, i + 4));
  return next + b.n;
}

/**
 * The bulk load's multi-row inserts being filled: full statements run as they fill, across
 * batches (a batch's last rows wait for the next one's instead of going one statement each),
 * and `flushPacked` writes what is left at the end.
 */
interface PackedRows {
  domains: unknown[];
  dn: number;
  records: unknown[];
  rn: number;
}

function packedRows(): PackedRows {
  return { domains: Array((W + 1) * DOMAIN_ROWS), dn: 0, records: Array(5 * RECORD_ROWS), rn: 0 };
}

/** The rows still waiting in `rows`, one statement each. */
function flushPacked(s: Statements, rows: PackedRows): void {
  for (let j = 0; j < rows.dn; j += W + 1) s.insertDomain.run(rows.domains.slice(j, j + W + 1));
  for (let j = 0; j < rows.rn; j += 5) s.insertRecord.run(rows.records.slice(j, j + 5));
  rows.dn = 0;
  rows.rn = 0;
}

/**
 * `appendDomains` of a packed batch (snapshot-encode.ts), read straight into the statements'
 * parameters: no batch of columns in between, no copy of a chunk (measured at 200,000 domains:
 * unpacking and regrouping the values were a fifth of the writing thread's time). Records may go
 * before their domain, and a domain's row after its reverse records: the bulk load runs with
 * foreign keys off.
 */
function appendPacked(s: Statements, rows: PackedRows, text: string, n: number, next: number): number {
  const p = packedParts(text);
  const { domains, records } = rows;
  const reverses: unknown[] = [];
  let dn = rows.dn;
  let rn = rows.rn;
  let i = 0;
  for (let d = 0; d < n; d++) {
    const id = next + d;
    const first = dn;
    domains[dn++] = id;
    for (let k = 0; k < W; k++) domains[dn++] = packedValue(k, p[i++]);
    const network = domains[first + 1 + NETWORK];
    const provider = domains[first + 1 + PROVIDER];
    if (dn === domains.length) {
      s.insertDomains.run(domains);
      dn = 0;
    }
    for (let end = i + 1 + Number(p[i]) * 4, j = i + 1; j < end; j += 4) {
      records[rn++] = id;
      records[rn++] = p[j];
      records[rn++] = p[j + 1];
      records[rn++] = p[j + 2];
      records[rn++] = p[j + 3];
      if (rn === records.length) {
        s.insertRecords.run(records);
        rn = 0;
      }
    }
    i += 1 + Number(p[i]) * 4;
    const a = Number(p[i++]);
    for (let end = i + a; i < end; i++) reverses.push(network, provider, p[i], id);
  }
  rows.dn = dn;
  rows.rn = rn;
  // Upserted: an address claimed by two domains of the file stays with the later one.
  for (let j = 0; j < reverses.length; j += 4) s.upsertReverse.run(reverses.slice(j, j + 4));
  return next + n;
}

/** Options of `withSqliteSnapshotSink`. */
export interface SqliteSnapshotOptions {
  /**
   * Closes the store's other connections to the file (its read connection) before an import into
   * an empty map, so that the bulk load can leave WAL mode (`leaveWal`); they are reopened after.
   */
  releaseReaders?: () => void;
}

/**
 * Runs `fn` with a snapshot sink in one SQLite transaction on the writer connection. The Kysely
 * connection is held for the whole import, so no other query of this store runs inside it (they
 * wait); `control` is the commit-counted view of the same connection, so the read caches see the
 * commit like any other.
 */
export async function withSqliteSnapshotSink<T>(
  db: Kysely<Database>,
  writer: BetterSqlite3.Database,
  control: BetterSqlite3.Database,
  fn: (sink: SnapshotSink) => Promise<T>,
  opts: SqliteSnapshotOptions = {},
): Promise<T> {
  return db.connection().execute(async (conn) => {
    const s = statementsOf(writer);
    // A large import touches hundreds of MB of table and index pages; with the default 2 MB cache
    // SQLite spills dirty pages before the commit. The bulk load appends (a page is written once,
    // spilled or not) and its index builds sort in runs of the cache's size, merged from temporary
    // files: 32 MB keeps the peak RSS low.
    const cacheSize = writer.pragma("cache_size", { simple: true });
    const bulkLoad = Boolean(s.isEmpty.get());
    writer.pragma(bulkLoad ? "cache_size = -32768" : "cache_size = -131072");
    // A statement that fires triggers (domains has some) keeps a statement journal: in memory, not
    // in a temporary file (measured: a third of a domain's cost). Not for the bulk load: no
    // trigger fires, and its index sorts would hold their runs in memory (the peak RSS).
    // The map's emptiness is checked again inside the transaction; this is only the pragmas'.
    const tempStore = writer.pragma("temp_store", { simple: true });
    if (!bulkLoad) writer.pragma("temp_store = memory");
    let rollbackJournal = false;
    if (bulkLoad) {
      opts.releaseReaders?.();
      rollbackJournal = leaveWal(writer);
    }
    // The bulk load's rows reference the ids it has just given (and its fold of a token seen twice
    // moves the records and reverse records before deleting a line): a foreign-key lookup per
    // record would check what holds by construction. Only settable outside a transaction.
    const foreignKeys = writer.pragma("foreign_keys", { simple: true });
    if (bulkLoad) writer.pragma("foreign_keys = OFF");
    control.exec("begin immediate");
    try {
      const bulk = startBulkLoad(writer, Boolean(s.isEmpty.get()));
      if (!bulk && bulkLoad) {
        // Not a bulk load after all (another trigger on the map): the upserts, foreign keys on.
        control.exec("rollback");
        writer.pragma(`foreign_keys = ${Number(foreignKeys)}`);
        control.exec("begin immediate");
      }
      const rows = packedRows();
      const write = (b: SqliteBatch) => {
        if (bulk) {
          flushPacked(s, rows);
          bulk.next = appendDomains(s, b, bulk.next);
        } else writeDomains(s, b);
      };
      const result = await fn({
        async writeDomains(batch) {
          write(sqliteColumns(batch));
        },
        // The bulk load's statements run across batches: small messages (snapshot.ts).
        encoding: bulk ? { store: "sqlite", batch: BULK_MESSAGE } : { store: "sqlite" },
        async writeEncoded(batch) {
          if (batch.store !== "sqlite") throw new Error("a batch encoded for another store");
          if (bulk && batch.packed !== null)
            bulk.next = appendPacked(s, rows, batch.packed, batch.n, bulk.next);
          else
            write(
              batch.packed === null ? (batch.columns as SqliteBatch) : unpackSqlite(batch.packed, batch.n),
            );
        },
        async writeJournal(entries) {
          return runAppendJournal(s.appendJournal, entries);
        },
        async writeCheckpoints(checkpoints) {
          for (const c of checkpoints) await crawlerLog.setCheckpoint(conn, c);
        },
      });
      if (bulk) {
        flushPacked(s, rows);
        // The index builds' sorts on helper threads too: the parse worker is done by now.
        const threads = writer.pragma("threads", { simple: true });
        writer.pragma(`threads = ${SORT_THREADS}`);
        try {
          finishBulkLoad(writer, bulk);
        } finally {
          writer.pragma(`threads = ${Number(threads)}`);
        }
      }
      control.exec("commit");
      // In WAL mode the commit's checkpoint copied the WAL into the database, but the WAL file
      // keeps the size of the whole import (as large as the map) until something truncates it:
      // done here, almost free now (measured at 100,000 domains: 305 MB on disk before, 152 MB
      // after). A reader still on an old snapshot only makes it give up (after the busy timeout).
      if (!rollbackJournal) writer.pragma("wal_checkpoint(TRUNCATE)");
      return result;
    } catch (err) {
      if (writer.inTransaction) control.exec("rollback");
      throw err;
    } finally {
      writer.pragma(`foreign_keys = ${Number(foreignKeys)}`);
      // Back to WAL (the file's mode from now on, as openWriter sets it): nothing else has the file
      // open, so this cannot be refused.
      if (rollbackJournal) writer.pragma("journal_mode = WAL");
      writer.pragma(`temp_store = ${Number(tempStore)}`);
      writer.pragma(`cache_size = ${Number(cacheSize)}`);
    }
  });
}
