import type BetterSqlite3 from "better-sqlite3";
import { perConnection } from "./sqlite-open.js";
import type { Kysely } from "kysely";
import type { Network } from "../../domain/networks.js";
import type { Provider } from "../../domain/providers.js";
import type { DomainRecord, DomainWrite } from "../../domain/types.js";
import { kyselyParts } from "../kysely/kysely-parts.js";
import { storeOver } from "../kysely/kysely-lifecycle.js";
import type { Store } from "../store.js";
import { domainColumns, toJournal } from "../kysely/rows.js";
import type { Database } from "../schema.js";
import type { JournalEntry } from "../crawler-log.port.js";
import type { DomainMap, ReverseChange } from "../domain-map.port.js";
import { lastReverseChanges } from "../kysely/domain-map-bulk.queries.js";
import type { ChangeEventWrite } from "../../domain/change-events.js";
import { CHANGE_EVENT_COLUMNS, pushChangeEvent } from "../kysely/change-log.queries.js";
import { SQLITE_TOKEN_IN_JSON, sqliteJournalInsert } from "../kysely/journal.queries.js";
import { type DerivedColumns, type RowMove, withDerivedUpkeep } from "./sqlite-derived-upkeep.js";
import { upsertStaged } from "./sqlite-domain-stage.js";

/**
 * The crawler's bulk writes on SQLite, as prepared better-sqlite3 statements on the writer
 * connection. Through Kysely each row costs a query build, a compile and a fresh `prepare` (~25 µs
 * a domain upsert here); a prepared statement runs the same SQL for ~3 µs. Same SQL, same results:
 * only the path to the database differs.
 *
 * Only a store over an open transaction uses them (`SqliteStore.transaction`): Kysely's SQLite driver
 * holds its one connection for the whole transaction, so these statements run inside it, and no
 * other caller's query can slip in between. Outside a transaction the Kysely path stays, behind
 * the driver's connection lock.
 */
interface BulkStatements {
  appendJournal: BetterSqlite3.Statement;
  appendChangeEvents: BetterSqlite3.Statement;
  anyJournal: BetterSqlite3.Statement;
  journalByTokens: BetterSqlite3.Statement;
  domainRowsByTokens: BetterSqlite3.Statement;
  domainIdsByTokens: BetterSqlite3.Statement;
  deleteRecords: BetterSqlite3.Statement;
  insertRecord: BetterSqlite3.Statement;
  appendChangeEvent: BetterSqlite3.Statement;
  setReverse: BetterSqlite3.Statement;
  removeReverse: BetterSqlite3.Statement;
}

/** A reverse record set (network, provider, address, domain id): the crawler's and the import's. */
export const SQLITE_SET_REVERSE = `insert into reverse_records (network, provider, address, domain_id) values (?, ?, ?, ?)
       on conflict (address, network, provider) do update set domain_id = excluded.domain_id`;

/** Tokens per lookup statement, as the Kysely path's `in (…)` lists. */
const CHUNK = 500;
/**
 * Rows per multi-row insert of the change log: one call into SQLite for 64 rows instead of 64
 * (15 columns × 64 = 960 parameters, far below SQLite's limit): ~15% less CPU a row here.
 */
const MULTI_ROWS = 64;

type JournalRow = Parameters<typeof toJournal>[0];

/**
 * A source's journal entries of a list of tokens (a JSON array, given twice: SQLITE_TOKEN_IN_JSON),
 * by token, then in chain order.
 */
export const SQLITE_JOURNAL_BY_TOKENS = `select source_id, chain_id, block_number, block_hash, log_index, tx_hash, contract, token_id, event, block_time
  from journal where source_id = ? and ${SQLITE_TOKEN_IN_JSON}
  order by token_id, block_number, log_index`;

// Statements belong to their connection; the cache must not keep a closed connection alive.
const statementsOf = perConnection((db): BulkStatements => {
  // A range transaction of a backfill touches tens of MB of journal and index pages; with the
  // default 2 MB cache SQLite spills dirty pages to the WAL before the commit and reads them back.
  db.pragma("cache_size = -131072");
  // Statements that may abort halfway (triggers, upserts, foreign keys) run with a statement
  // journal: the first change of a page within the statement copies the page there, and past
  // 64 KiB that journal is a temporary file. A backfill's range wrote ~8 such pages (4 KiB, one
  // system call each) per domain, six times the WAL's frames (strace, synthetic 10,000-name
  // write); in memory they are copies. Sorts (`create index`, a large `order by`) still spill to
  // temporary files: temp_store does not govern the sorter. SQLite refuses the change inside a
  // transaction once TEMP tables exist (a snapshot import's): then it stays as it was.
  try {
    db.pragma("temp_store = MEMORY");
  } catch {
    // the statement journal stays a file: slower, same results
  }
  const changeEvents = (rows: number) =>
    `insert into change_events (${CHANGE_EVENT_COLUMNS.join(", ")}) values ${Array(rows)
      .fill(`(${CHANGE_EVENT_COLUMNS.map(() => "?").join(", ")})`)
      .join(", ")}`;
  const s: BulkStatements = {
    appendChangeEvent: db.prepare(changeEvents(1)),
    appendChangeEvents: db.prepare(changeEvents(MULTI_ROWS)),
    appendJournal: db.prepare(sqliteJournalInsert(1)),
    anyJournal: db.prepare("select 1 from journal where source_id = ? limit 1").pluck(),
    // One statement per chunk of tokens, passed as a JSON array: an index probe each, without a
    // round trip from JS per token (~2x faster here than one prepared lookup per token).
    journalByTokens: db.prepare(SQLITE_JOURNAL_BY_TOKENS),
    domainRowsByTokens: db.prepare(
      "select token_id, id, name, tld, registered_at from domains where network = ? and provider = ? and token_id in (select value from json_each(?))",
    ),
    domainIdsByTokens: db
      .prepare(
        "select token_id, id from domains where network = ? and provider = ? and token_id in (select value from json_each(?))",
      )
      .raw(),
    deleteRecords: db.prepare("delete from records where domain_id = ?"),
    insertRecord: db.prepare(
      "insert into records (domain_id, key, value, native_key, native_value) values (?, ?, ?, ?, ?)",
    ),
    // The Kysely path's statements (setReverse, removeReverse).
    setReverse: db.prepare(SQLITE_SET_REVERSE),
    removeReverse: db.prepare(
      "delete from reverse_records where address = ? and network = ? and provider = ?",
    ),
  };
  return s;
});

/** The rescore's update of one domain's signals (its plan is checked by the store tests). */
export const SQLITE_UPDATE_SIGNALS =
  "update domains set base_score = ?, spam = ?, csam_ok = ?, kyc = ?, tags = ? where id = ?";

/**
 * Its statement, apart from the crawler's: those enlarge the connection's page cache for a
 * backfill's ranges (128 MB), which a rescore's small transactions do not need.
 */
const updateSignalsOf = perConnection((db) => db.prepare(SQLITE_UPDATE_SIGNALS));

/** The stores sqliteTransactionStore built (writesInBulk). */
const bulkStores = new WeakSet<Store>();

/** True when `store` writes through the bulk statements below (a SQLite store's transaction). */
export function writesInBulk(store: Store): boolean {
  return bulkStores.has(store);
}

/**
 * The store over an open SQLite transaction: the Kysely parts, with the crawler's bulk writes and
 * journal reads on prepared statements of the same connection.
 */
export function sqliteTransactionStore(db: Kysely<Database>, conn: BetterSqlite3.Database): Store {
  const base = kyselyParts(db, "sqlite");
  /**
   * Ids of the domain rows this transaction inserted whose records it has not written yet: they
   * have none to delete (a backfill's domains are nearly all new), so `replaceRecordsMany` skips
   * their delete, one statement a domain.
   */
  const recordless = new Set<number>();
  const stmts = (): BulkStatements => statementsOf(conn);

  /** The rows of these writes' tokens already stored: id and derived columns, by write key. */
  function existingRows(writes: DomainWrite[]): Map<string, DerivedColumns & { id: number }> {
    const byKind = new Map<string, { network: string; provider: string; tokens: string[] }>();
    for (const d of writes) {
      const kind = `${d.network}|${d.provider}`;
      let k = byKind.get(kind);
      if (k === undefined) {
        k = { network: d.network, provider: d.provider, tokens: [] };
        byKind.set(kind, k);
      }
      k.tokens.push(d.tokenId);
    }
    const out = new Map<string, DerivedColumns & { id: number }>();
    for (const { network, provider, tokens } of byKind.values())
      for (let i = 0; i < tokens.length; i += CHUNK)
        for (const r of stmts().domainRowsByTokens.all(
          network,
          provider,
          JSON.stringify(tokens.slice(i, i + CHUNK)),
        ) as Array<DerivedColumns & { id: number | bigint; token_id: string }>) {
          const { token_id, id, ...derived } = r;
          out.set(`${network}|${provider}|${token_id}`, { ...derived, provider, network, id: Number(id) });
        }
    return out;
  }

  const store = storeOver("sqlite", db, {
    ...base,
    changeLog: {
      ...base.changeLog,

      /**
       * The change log's appends of a crawler transaction (SQLite has one writer: ids are in commit
       * order), MULTI_ROWS rows a statement: ids follow the rows' order within a statement as across.
       */
      async appendChangeEvents(events: ChangeEventWrite[]): Promise<void> {
        const s = stmts();
        const values: unknown[] = [];
        let i = 0;
        for (; i + MULTI_ROWS <= events.length; i += MULTI_ROWS) {
          values.length = 0;
          for (let k = i; k < i + MULTI_ROWS; k++) pushChangeEvent(values, events[k]);
          s.appendChangeEvents.run(values);
        }
        for (; i < events.length; i++) {
          values.length = 0;
          pushChangeEvent(values, events[i]);
          s.appendChangeEvent.run(values);
        }
      },
    },
    crawlerLog: {
      ...base.crawlerLog,

      /**
       * One entry a statement: a multi-row `insert … on conflict do nothing` measured ~10% slower a row
       * here (SQLite runs its VALUES list as a coroutine), unlike the change log's plain inserts.
       */
      async appendJournal(entries: JournalEntry[]): Promise<number> {
        return runAppendJournal(stmts().appendJournal, entries);
      },

      async findJournalByTokens(sourceId: string, tokenIds: string[]): Promise<JournalEntry[]> {
        const s = stmts();
        // A source's first range finds nothing: one probe instead of the lookups.
        if (tokenIds.length === 0 || s.anyJournal.get(sourceId) === undefined) return [];
        const out: JournalEntry[] = [];
        // Chunks as the Kysely path's `in (…)` lists, in its order: by token, then chain order.
        for (let i = 0; i < tokenIds.length; i += CHUNK) {
          const chunk = JSON.stringify(tokenIds.slice(i, i + CHUNK));
          for (const r of s.journalByTokens.all(sourceId, chunk, chunk)) out.push(toJournal(r as JournalRow));
        }
        return out;
      },
    },
    domainMap: {
      ...base.domainMap,

      /**
       * The rescore's writes: one prepared update by id a domain (a rowid lookup each, ~2 µs here),
       * the values encoded as the Kysely path's.
       */
      async updateDomainSignalsMany(
        ...[rows]: Parameters<DomainMap["updateDomainSignalsMany"]>
      ): Promise<void> {
        const update = updateSignalsOf(conn);
        for (const { id, signals: s } of rows)
          update.run(
            s.baseScore,
            s.spam ? 1 : 0,
            s.csamOk ? 1 : 0,
            s.kyc ? 1 : 0,
            JSON.stringify(s.tags),
            id,
          );
      },

      /**
       * The ids and derived columns of the rows already there (one lookup per chunk of tokens), then
       * the Kysely path's upsert for all rows in one statement, staged (sqlite-domain-stage.ts),
       * without a `returning id` (RETURNING alone costs ~15 µs a row through better-sqlite3 here):
       * a new row's id follows from the AUTOINCREMENT sequence. The triggers keeping `name_holders`
       * and `tld_registrations` are held off for the write, which keeps both tables itself, once per
       * name and per TLD (sqlite-derived-upkeep.ts).
       */
      async upsertDomains(domains: DomainWrite[]): Promise<number[]> {
        const keyOf = (d: DomainWrite) => `${d.network}|${d.provider}|${d.tokenId}`;
        // The last write of a token wins, as in the Kysely path (one statement per token there).
        const unique = new Map(domains.map((d) => [keyOf(d), d]));
        const before = existingRows([...unique.values()]);
        const keys = [...unique.keys()];
        const rows = [...unique.values()].map(domainColumns);
        const moves: RowMove[] = rows.map((after, i) => ({ before: before.get(keys[i]), after }));
        const stored = withDerivedUpkeep(
          conn,
          () => upsertStaged(conn, rows, (i) => before.get(keys[i])?.id),
          () => moves,
        );
        const ids = new Map<string, number>();
        stored.forEach((id, i) => {
          if (!before.has(keys[i])) recordless.add(id);
          ids.set(keys[i], id);
        });
        return domains.map((d) => ids.get(keyOf(d)) as number);
      },

      async findDomainIdsByTokens(
        network: Network,
        provider: Provider,
        tokenIds: string[],
      ): Promise<Map<string, number>> {
        const find = stmts().domainIdsByTokens;
        const out = new Map<string, number>();
        for (let i = 0; i < tokenIds.length; i += CHUNK)
          for (const [token, id] of find.all(
            network,
            provider,
            JSON.stringify(tokenIds.slice(i, i + CHUNK)),
          ) as Array<[string, number | bigint]>)
            out.set(token, Number(id));
        return out;
      },

      async applyReverses(changes: readonly ReverseChange[]): Promise<void> {
        const s = stmts();
        const { sets, removes } = lastReverseChanges(changes);
        for (const r of removes) s.removeReverse.run(r.address, r.network, r.provider);
        for (const r of sets) s.setReverse.run(r.network, r.provider, r.address, r.domainId);
      },

      async replaceRecords(domainId: number, records: DomainRecord[]): Promise<void> {
        recordless.delete(domainId);
        return base.domainMap.replaceRecords(domainId, records);
      },

      async setNativeRecord(...a: Parameters<DomainMap["setNativeRecord"]>): Promise<void> {
        recordless.delete(a[0]);
        return base.domainMap.setNativeRecord(...a);
      },

      async replaceRecordsMany(items: Array<{ domainId: number; records: DomainRecord[] }>): Promise<void> {
        const s = stmts();
        for (const it of items) if (!recordless.has(it.domainId)) s.deleteRecords.run(it.domainId);
        const seen = new Set<number>();
        for (const it of items) {
          if (seen.has(it.domainId)) continue; // a domain listed twice keeps its first record set
          seen.add(it.domainId);
          recordless.delete(it.domainId);
          // The last record of a key wins, as in the Kysely path.
          const unique = new Map(it.records.map((r) => [r.key, r]));
          for (const r of unique.values())
            s.insertRecord.run(it.domainId, r.key, r.value, r.nativeKey, r.nativeValue);
        }
      },
    },
  });
  bulkStores.add(store);
  return store;
}

/**
 * Runs the journal insert (`insert … on conflict do nothing`, columns in JournalEntry order) for
 * each entry; returns how many were new. The crawler's writes and the snapshot import share it.
 */
export function runAppendJournal(insert: BetterSqlite3.Statement, entries: readonly JournalEntry[]): number {
  let inserted = 0;
  for (const e of entries)
    inserted += insert.run(
      e.sourceId,
      e.chainId,
      e.blockNumber,
      e.blockHash,
      e.logIndex,
      e.txHash,
      e.contract,
      e.tokenId,
      e.event,
      e.blockTime ?? null,
    ).changes;
  return inserted;
}
