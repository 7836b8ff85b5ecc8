import type { Transaction } from "kysely";
import type { AccountsDb } from "../accounts.port.js";
import type { Dialect, StoreParts } from "../store.js";
import * as changeLog from "./change-log.queries.js";
import * as crawlerLog from "./crawler-log.queries.js";
import * as bulk from "./domain-map-bulk.queries.js";
import * as scans from "./domain-map-scans.queries.js";
import * as map from "./domain-map.queries.js";
import * as journalHistory from "./journal-history.queries.js";
import * as journal from "./journal.queries.js";
import * as projects from "./projects.queries.js";
import * as rescoreState from "./rescore-state.queries.js";
import type { Db } from "./rows.js";
import * as scoring from "./scoring-data.queries.js";
import * as winnerJobs from "./settings-winner-jobs.queries.js";

/** A queries module's functions with their first argument, the handle, given. */
type Bound<M> = {
  [K in keyof M]: M[K] extends (db: Db, ...a: infer A) => infer R ? (...a: A) => R : never;
};

/**
 * The functions of a queries module bound to one handle: `queries.findX(db, ...a)` becomes
 * `part.findX(...a)`. Each part below is made of them, typed by its port: a query added to a
 * queries module and to its port is in the part with nothing else to write.
 */
export function bindQueries<M extends object>(db: Db, queries: M): Bound<M> {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(queries)) {
    if (typeof fn === "function") out[name] = (...a: unknown[]) => fn(db, ...a);
  }
  return out as Bound<M>;
}

/** Runs `fn` on `db` inside one transaction (`db`'s own, when it is one already). */
export function inTransaction<T>(db: Db, fn: (db: Db) => Promise<T>): Promise<T> {
  if ((db as Transaction<unknown>).isTransaction) return fn(db);
  return db.transaction().execute(fn);
}

/**
 * The store's parts over one Kysely handle (a connection pool, or an open transaction), shared by
 * both backends; each backend replaces a few functions with its own (sqlite/, postgres/).
 */
export function kyselyParts(db: Db, dialect: Dialect): StoreParts {
  return {
    domainMap: {
      ...bindQueries(db, map),
      ...bindQueries(db, bulk),
      ...bindQueries(db, scans),
      // No read cache here, so no change signal: derived caches stay off.
      readVersion: () => null,
    },
    crawlerLog: {
      ...bindQueries(db, crawlerLog),
      ...bindQueries(db, journal),
      ...bindQueries(db, journalHistory),
      findJournalUpTo: (...a) => journal.findJournalByTokens(db, ...a),
      holdsSourceLease: (...a) => crawlerLog.holdsSourceLease(db, dialect, ...a),
    },
    changeLog: {
      ...bindQueries(db, changeLog),
      pruneChangeEvents: (...a) => inTransaction(db, (d) => changeLog.pruneChangeEvents(d, ...a)),
    },
    scoring: {
      ...bindQueries(db, scoring),
      ...bindQueries(db, rescoreState),
      setNameSkeletons: (...a) => inTransaction(db, (d) => scoring.setNameSkeletons(d, ...a)),
      importKycAddresses: (...a) => inTransaction(db, (d) => scoring.importKycAddresses(d, ...a)),
    },
    winnerJobs: bindQueries(db, winnerJobs),
    projects: bindQueries(db, projects),
    accounts: db as unknown as AccountsDb,
  };
}
