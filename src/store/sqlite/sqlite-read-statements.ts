import type BetterSqlite3 from "better-sqlite3";
import { JOURNAL_TOKEN_KEY, SQLITE_TOKEN_IN_JSON, TOKEN_KEY_CHARS } from "../kysely/journal.queries.js";
import { selectWithRecords } from "./sqlite-name-scan.js";

// By the token index's key (JOURNAL_TOKEN_KEY) and the whole id: the source, then the tokens (or
// the token) twice, then the bound.
const JOURNAL_OF_TOKENS = `select * from journal where source_id = ? and ${SQLITE_TOKEN_IN_JSON}`;
const JOURNAL_OF_TOKEN = `select * from journal where source_id = ?
  and ${JOURNAL_TOKEN_KEY.sqlite} = substr(?, -${TOKEN_KEY_CHARS}) and token_id = ?`;
const JOURNAL_ORDER = "order by token_id, block_number, log_index";

/** Time travel's journal reads (exported for the test of their query plans). */
export const JOURNAL_READS = {
  journalToBlock: `${JOURNAL_OF_TOKENS} and block_number <= ? ${JOURNAL_ORDER}`,
  journalToTime: `${JOURNAL_OF_TOKENS} and block_time <= ? ${JOURNAL_ORDER}`,
  tokenJournalToBlock: `${JOURNAL_OF_TOKEN} and block_number <= ? ${JOURNAL_ORDER}`,
  tokenJournalToTime: `${JOURNAL_OF_TOKEN} and block_time <= ? ${JOURNAL_ORDER}`,
} as const;

/** The SQLite store's hot reads, prepared once on its read-only connection (sqlite-store.ts). */
export interface ReadStatements {
  dataVersion: BetterSqlite3.Statement;
  byName: BetterSqlite3.Statement;
  byOwner: BetterSqlite3.Statement;
  reverse: BetterSqlite3.Statement;
  keyByHash: BetterSqlite3.Statement;
  journalToBlock: BetterSqlite3.Statement;
  journalToTime: BetterSqlite3.Statement;
  tokenJournalToBlock: BetterSqlite3.Statement;
  tokenJournalToTime: BetterSqlite3.Statement;
}

export function prepareReadStatements(r: BetterSqlite3.Database): ReadStatements {
  return {
    dataVersion: r.prepare("pragma data_version").pluck(),
    // A name's domains with their records in one statement, rows as arrays (as byOwner): the
    // DNS role's computed answers and the API's cache misses read through it.
    byName: r.prepare(`${selectWithRecords({})} where d.name = ? order by d.id`).raw(true),
    // An owner's domains with their records in one statement, rows as arrays (sqlite-name-scan.ts):
    // not a statement and row objects for each domain's records. Its domains sit anywhere in the
    // file, so on a large map most of these reads miss the page cache (bench/HISTORY.md).
    byOwner: r.prepare(`${selectWithRecords({})} where d.owner = ? order by d.id limit 10000`).raw(true),
    reverse: r.prepare("select * from reverse_records where address = ?"),
    keyByHash: r.prepare("select * from api_keys where hash = ? and revoked_at is null"),
    journalToBlock: r.prepare(JOURNAL_READS.journalToBlock),
    journalToTime: r.prepare(JOURNAL_READS.journalToTime),
    tokenJournalToBlock: r.prepare(JOURNAL_READS.tokenJournalToBlock),
    tokenJournalToTime: r.prepare(JOURNAL_READS.tokenJournalToTime),
  };
}
