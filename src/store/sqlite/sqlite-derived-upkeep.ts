import type BetterSqlite3 from "better-sqlite3";
import { perConnection } from "./sqlite-open.js";
import { DEFERRED_TABLE } from "../map-derived-ddl.js";

/**
 * The crawler's upkeep of `name_holders` and `tld_registrations` on SQLite (migration 0021): one
 * multi-row write of `domains` runs with the row triggers held off (`map_derived_deferred` holds a
 * row, inside the writer's transaction only), then each name and each (TLD, namespace, network)
 * the write moved is changed once, by its net count, in name order. The result is the triggers'
 * (the conformance tests compare both tables with a fill from scratch):
 * - `name_holders.holders` moves by the net count; a name's row goes with its last holder;
 *   `version` moves when the count crosses between one holder and several from before the write
 *   to after it (RESCORE_VERSION_NOTE), and a name that arrives with several holders at once
 *   starts unscored (version 1), as PostgreSQL's statement triggers have it;
 * - `tld_registrations.domains` moves by the net count; `first_registered_at` is the smaller of the
 *   kept one and the entering rows' first, or read again from `domains` (the `domains_tld` index)
 *   when a row left the pair with a registration.
 */

/** The columns of a domain row that the derived tables depend on. */
export interface DerivedColumns {
  name: string;
  tld: string;
  provider: string;
  network: string;
  registered_at: number | null;
}

interface UpkeepStatements {
  defer: BetterSqlite3.Statement;
  resume: BetterSqlite3.Statement;
  addHolders: BetterSqlite3.Statement;
  dropHolders: BetterSqlite3.Statement;
  removeHolders: BetterSqlite3.Statement;
  enterPair: BetterSqlite3.Statement;
  refirstPair: BetterSqlite3.Statement;
  dropPair: BetterSqlite3.Statement;
}

const statementsOf = perConnection((db): UpkeepStatements => {
  const pair = "tld = ? and provider = ? and network = ?";
  const s: UpkeepStatements = {
    defer: db.prepare(`insert or ignore into ${DEFERRED_TABLE} (id) values (1)`),
    resume: db.prepare(`delete from ${DEFERRED_TABLE}`),
    addHolders: db.prepare(
      `insert into name_holders (name, holders, version) values (?, ?, ?)
       on conflict (name) do update set holders = holders + excluded.holders,
         version = version + ((holders = 1) <> (holders + excluded.holders = 1))`,
    ),
    dropHolders: db.prepare("delete from name_holders where name = ? and holders + ? <= 0"),
    removeHolders: db.prepare(
      "update name_holders set holders = holders + ?, version = version + ((holders = 1) <> (holders + ? = 1)) where name = ?",
    ),
    enterPair: db.prepare(
      `insert into tld_registrations (tld, provider, network, domains, first_registered_at) values (?, ?, ?, ?, ?)
       on conflict (tld, provider, network) do update set domains = tld_registrations.domains + excluded.domains,
         first_registered_at = case when excluded.first_registered_at is null then tld_registrations.first_registered_at
           when tld_registrations.first_registered_at is null then excluded.first_registered_at
           else min(tld_registrations.first_registered_at, excluded.first_registered_at) end`,
    ),
    refirstPair: db.prepare(
      `update tld_registrations set first_registered_at = (select min(registered_at) from domains where ${pair})
       where ${pair}`,
    ),
    dropPair: db.prepare(`delete from tld_registrations where ${pair} and domains <= 0`),
  };
  return s;
});

/** One row's move: its derived columns before the write (undefined: a new row) and after it. */
export interface RowMove {
  before: DerivedColumns | undefined;
  after: DerivedColumns;
}

/**
 * Runs `write` (multi-row writes of `domains`, none of them a delete) with the row triggers held
 * off, then applies `moves` (every row the write inserted or updated) to the derived tables.
 */
export function withDerivedUpkeep<T>(
  db: BetterSqlite3.Database,
  write: () => T,
  moves: () => readonly RowMove[],
): T {
  const s = statementsOf(db);
  s.defer.run();
  try {
    const result = write();
    applyMoves(s, moves());
    return result;
  } finally {
    s.resume.run();
  }
}

interface PairMove {
  tld: string;
  provider: string;
  network: string;
  net: number;
  first: number | null;
  refirst: boolean;
}

function applyMoves(s: UpkeepStatements, moves: readonly RowMove[]): void {
  const names = new Map<string, number>();
  const pairs = new Map<string, PairMove>();
  const pairOf = (c: DerivedColumns) => {
    const key = `${c.tld}\u0000${c.provider}\u0000${c.network}`;
    let p = pairs.get(key);
    if (p === undefined) {
      p = { tld: c.tld, provider: c.provider, network: c.network, net: 0, first: null, refirst: false };
      pairs.set(key, p);
    }
    return p;
  };
  for (const { before, after } of moves) {
    if (before === undefined || before.name !== after.name) {
      if (before !== undefined) names.set(before.name, (names.get(before.name) ?? 0) - 1);
      names.set(after.name, (names.get(after.name) ?? 0) + 1);
    }
    if (
      before !== undefined &&
      before.tld === after.tld &&
      before.provider === after.provider &&
      before.network === after.network &&
      before.registered_at === after.registered_at
    )
      continue;
    if (before !== undefined) {
      const leave = pairOf(before);
      leave.net--;
      if (before.registered_at !== null) leave.refirst = true;
    }
    const enter = pairOf(after);
    enter.net++;
    if (after.registered_at !== null && (enter.first === null || after.registered_at < enter.first))
      enter.first = after.registered_at;
  }
  for (const name of [...names.keys()].sort()) {
    const n = names.get(name) as number;
    if (n > 0) s.addHolders.run(name, n, n > 1 ? 1 : 0);
    else if (n < 0 && s.dropHolders.run(name, n).changes === 0) s.removeHolders.run(n, n, name);
  }
  for (const p of pairs.values()) {
    if (p.net === 0 && p.first === null && !p.refirst) continue;
    s.enterPair.run(p.tld, p.provider, p.network, p.net, p.first);
    if (p.refirst) s.refirstPair.run(p.tld, p.provider, p.network, p.tld, p.provider, p.network);
    if (p.net < 0) s.dropPair.run(p.tld, p.provider, p.network);
  }
}
