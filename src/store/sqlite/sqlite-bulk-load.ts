import type BetterSqlite3 from "better-sqlite3";
import { DOMAIN_COLUMNS, KEY_COLUMNS } from "../kysely/rows.js";
import { mapDerived } from "../map-derived-ddl.js";
import { dedupeStatements, isUniqueViolation } from "../snapshot-bulk-load.js";

/*
 * The SQLite bulk load of a snapshot into an empty map (snapshot-bulk-load.ts): its start (indexes
 * and triggers dropped), its end (indexes built by one sort each, derived tables filled, triggers
 * back) and its journal (a rollback journal instead of the WAL). The rows themselves are written by
 * sqlite-snapshot-import.ts.
 */

/** The tables whose triggers the bulk load checks. */
const BULK_TABLES = ["domains", "records", "reverse_records"];
/**
 * The tables whose secondary indexes it drops and builds again. Not `records`: its rows arrive in
 * domain_id order, the order of its key, so each row lands at the end of its B-tree (cheaper than
 * the sort of a build; measured when it had an index of its own, `records_native`, also in
 * domain_id order).
 */
const REBUILT_TABLES = ["domains", "reverse_records"];

export interface BulkLoad {
  /** The dropped indexes' own DDL (sqlite_master.sql), created again as they were. */
  indexes: Array<{ name: string; tbl: string; sql: string }>;
  next: number;
}

/**
 * Starts the bulk load if the map is empty and its triggers are the ones map-derived-ddl.ts
 * knows (another trigger would be left with rows it never saw): drops the indexes and triggers.
 */
export function startBulkLoad(writer: BetterSqlite3.Database, isEmpty: boolean): BulkLoad | null {
  if (!isEmpty) return null;
  const derived = mapDerived("sqlite");
  const known = derived.triggers.flatMap((t) => t.names).sort();
  const triggers = writer
    .prepare(
      `select name from sqlite_master where type = 'trigger' and tbl_name in (${BULK_TABLES.map(() => "?").join(", ")}) order by name`,
    )
    .pluck()
    .all(...BULK_TABLES) as string[];
  if (triggers.join() !== known.join()) return null;
  // Indexes with DDL: not those of a primary key (autoindexes, WITHOUT ROWID keys).
  const indexes = writer
    .prepare(
      `select name, tbl_name as tbl, sql from sqlite_master where type = 'index' and sql is not null
       and tbl_name in (${REBUILT_TABLES.map(() => "?").join(", ")}) order by name`,
    )
    .all(...REBUILT_TABLES) as BulkLoad["indexes"];
  for (const i of indexes) writer.exec(`drop index "${i.name}"`);
  for (const t of triggers) writer.exec(`drop trigger "${t}"`);
  const seq = writer.prepare("select seq from sqlite_sequence where name = 'domains'").pluck().get();
  return { indexes, next: Number(seq ?? 0) + 1 };
}

/**
 * Ends the bulk load: builds the indexes (the unique ones of domains after the others' and before
 * its own: a token seen twice is folded into its first line first), fills the derived tables,
 * creates the triggers again. sqlite_sequence already holds the largest id (SQLite keeps it on
 * explicit ids too).
 */
export function finishBulkLoad(writer: BetterSqlite3.Database, bulk: BulkLoad): void {
  const derived = mapDerived("sqlite");
  const [nameHolders, ...others] = derived.fills;
  const unique = (i: BulkLoad["indexes"][number]) => /^create\s+unique\s/i.test(i.sql);
  const ofDomains = (i: BulkLoad["indexes"][number]) => i.tbl === "domains";
  // The records' and reverse records' first: a duplicate token's fold looks them up by domain.
  for (const i of bulk.indexes) if (!ofDomains(i)) writer.exec(i.sql);
  for (const i of bulk.indexes) {
    if (!ofDomains(i) || !unique(i)) continue;
    writer.exec("savepoint snap_unique");
    try {
      writer.exec(i.sql);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      writer.exec("rollback to snap_unique");
      const updatable = DOMAIN_COLUMNS.filter((c) => !KEY_COLUMNS.has(c));
      for (const statement of dedupeStatements(updatable)) writer.exec(statement);
      writer.exec(i.sql);
    }
    writer.exec("release snap_unique");
  }
  for (const table of derived.tables) writer.exec(`delete from ${table}`);
  // Before the other domains indexes: a group-by over the table read in order, not through an
  // index whose order sends it to a random row for each entry (at ten million rows, a random read
  // each).
  for (const fill of others) writer.exec(fill);
  for (const i of bulk.indexes) if (ofDomains(i) && !unique(i)) writer.exec(i.sql);
  // After them: read from the name index alone (it holds the name), in name order.
  writer.exec(nameHolders);
  for (const t of derived.triggers) for (const statement of t.triggers) writer.exec(statement);
}

/**
 * The bulk load's journal: a rollback journal (`journal_mode = DELETE`) instead of the WAL. In WAL
 * mode the whole import is written twice, once to the WAL and once to the database by the commit's
 * checkpoint, and the WAL grows to the map's size before that (twice the map on disk: ~70 GB at
 * 10,000,000 domains). A rollback journal keeps the original content of the pages a transaction
 * overwrites, and pages past the database's original end are never journaled: into an empty map
 * it holds a few pages, and every row is written once, to the database. All or nothing still: a
 * process killed in the middle leaves a hot journal, and the next connection to open the file
 * rolls the database back to the empty map before anything reads it. Leaving WAL needs every
 * other connection to the file closed (`releaseReaders` closes this store's; another process's
 * open connection makes the switch fail, and the import then runs in WAL mode as before).
 * Returns whether the writer left WAL mode.
 */
export function leaveWal(writer: BetterSqlite3.Database): boolean {
  const timeout = writer.pragma("busy_timeout", { simple: true });
  // Another process holding the file: fail at once rather than wait for it.
  writer.pragma("busy_timeout = 0");
  try {
    return String(writer.pragma("journal_mode = DELETE", { simple: true })).toLowerCase() === "delete";
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith("SQLITE_BUSY")) return false;
    throw err;
  } finally {
    writer.pragma(`busy_timeout = ${Number(timeout)}`);
  }
}
