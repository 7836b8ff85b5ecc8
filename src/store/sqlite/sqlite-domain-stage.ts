import type BetterSqlite3 from "better-sqlite3";
import type { DomainsTable } from "../schema.js";
import { DOMAIN_COLUMNS, KEY_COLUMNS } from "../kysely/rows.js";
import { perConnection } from "./sqlite-open.js";

/**
 * The crawler's upsert of a batch of domain rows on SQLite as one statement: the rows are first
 * written to a TEMP table of this connection (no index, no trigger, never in the WAL), then moved
 * into `domains` by one `insert … select … on conflict do update`, in the order they were staged.
 *
 * Why: `domains` has triggers (the derived tables'), and a statement on a table with triggers runs
 * with a statement journal, which copies each page the statement changes the first time it changes
 * it. One upsert a row copied the row's table page and a leaf of each of its five indexes, for
 * every row; one statement a batch copies each page once. Measured on 50,000 new domains in
 * batches of 2,500 (the schema of today, a loaded machine): 41-47 µs a row one statement a row,
 * 30-38 µs staged, the staging included; the same rows without the triggers, one statement a row:
 * 30 µs. A multi-row VALUES upsert (10 or 50 rows) or rows read from one JSON argument gained
 * nothing.
 *
 * The ids: every row of the statement takes the next number of the AUTOINCREMENT sequence, in the
 * order of the select, an update too (the single-row upsert did the same: the ids stay those the
 * Kysely path gives). So when the sequence moved by exactly the number of rows staged, the row
 * staged k-th that was new got `before + 1 + k`; otherwise (never seen) each new row's id is read
 * back by its token.
 */
const STAGE = "temp.crawler_domain_writes";

interface StageStatements {
  create: BetterSqlite3.Statement;
  sequence: BetterSqlite3.Statement;
  idByToken: BetterSqlite3.Statement;
}

const statementsOf = perConnection(
  (db): StageStatements => ({
    // Created by each batch when missing: a TEMP table belongs to the connection, and goes with a
    // rolled-back transaction or a change of `temp_store` (the snapshot import's).
    create: db.prepare(
      `create temp table if not exists crawler_domain_writes (${DOMAIN_COLUMNS.join(", ")})`,
    ),
    sequence: db.prepare("select seq from main.sqlite_sequence where name = 'domains'").pluck(),
    idByToken: db
      .prepare("select id from main.domains where network = ? and provider = ? and token_id = ?")
      .pluck(),
  }),
);

/** The statements over the TEMP table, prepared once it exists (again prepared when it was recreated). */
const tableStatementsOf = perConnection((db) => {
  const updates = DOMAIN_COLUMNS.filter((c) => !KEY_COLUMNS.has(c))
    .map((c) => `${c} = excluded.${c}`)
    .join(", ");
  return {
    clear: db.prepare(`delete from ${STAGE}`),
    stage: db.prepare(
      `insert into ${STAGE} (${DOMAIN_COLUMNS.join(", ")}) values (${DOMAIN_COLUMNS.map(() => "?").join(", ")})`,
    ),
    // `where true`: an upsert's SELECT needs a WHERE clause (SQLite's parsing of ON CONFLICT).
    move: db.prepare(
      `insert into main.domains (${DOMAIN_COLUMNS.join(", ")})
       select ${DOMAIN_COLUMNS.join(", ")} from ${STAGE} where true order by rowid
       on conflict (network, provider, token_id) do update set ${updates}`,
    ),
  };
});

type Row = Omit<DomainsTable, "id">;

/**
 * Upserts `rows` (no two of one token) in their order inside the connection's open transaction;
 * returns each row's id, given `idBefore(i)`: the id of row i when it was already stored, else
 * undefined.
 */
export function upsertStaged(
  db: BetterSqlite3.Database,
  rows: readonly Row[],
  idBefore: (i: number) => number | undefined,
): number[] {
  const s = statementsOf(db);
  s.create.run();
  const t = tableStatementsOf(db);
  t.clear.run();
  // One array of bindings, filled in DOMAIN_COLUMNS' order for each row.
  const values = new Array<unknown>(DOMAIN_COLUMNS.length);
  for (const c of rows) {
    for (let k = 0; k < DOMAIN_COLUMNS.length; k++) values[k] = c[DOMAIN_COLUMNS[k]];
    t.stage.run(values);
  }
  const before = Number(s.sequence.get() ?? 0);
  t.move.run();
  const taken = Number(s.sequence.get() ?? 0) - before;
  t.clear.run();
  const ids = new Array<number>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const was = idBefore(i);
    if (was !== undefined) ids[i] = was;
    else if (taken === rows.length) ids[i] = before + 1 + i;
    else {
      const c = rows[i];
      ids[i] = Number(s.idByToken.get(c.network, c.provider, c.token_id));
    }
  }
  return ids;
}
