import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SignalsRow, signalsUpdate } from "../../src/store/kysely/domain-map-bulk.queries.js";
import type { Database as Schema } from "../../src/store/schema.js";
import { SQLITE_UPDATE_SIGNALS } from "../../src/store/sqlite/sqlite-bulk-writes.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const rows: SignalsRow[] = Array.from({ length: 500 }, (_, i) => ({
  id: i + 1,
  signals: { baseScore: 40, spam: false, csamOk: true, kyc: false, tags: ["a"] },
}));

/**
 * The rescore writes every domain's signals, 500 to a statement: a plan that scans `domains` per
 * statement makes a pass grow with the square of the map (SQLite chose one for `update … from v`
 * with bound values, even on an empty table). Both SQLite statements must look domains up by id.
 */
describe("the signals update's plan on SQLite", () => {
  let dir: string;
  let db: Database.Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-signals-plan-"));
    const store = createSqliteStore(join(dir, "map.db"));
    await store.migrate();
    await store.close();
    db = new Database(join(dir, "map.db"));
    db.exec("analyze");
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const plan = (text: string, parameters: readonly unknown[]) =>
    (db.prepare(`explain query plan ${text}`).all(...parameters) as { detail: string }[]).map(
      (r) => r.detail,
    );

  it("finds the rows of a many-row update by id, without a scan of the map", () => {
    const kysely = new Kysely<Schema>({ dialect: new SqliteDialect({ database: db }) });
    const { sql, parameters } = signalsUpdate(false, rows).compile(kysely);
    const steps = plan(sql, parameters);
    expect(steps.filter((s) => /\bdomains\b/.test(s))).toEqual([
      "SEARCH domains USING INTEGER PRIMARY KEY (rowid=?)",
    ]);
    // The PostgreSQL form, run on SQLite, is the plan that scanned: the check can tell them apart.
    const pg = signalsUpdate(true, rows).compile(kysely);
    expect(plan(pg.sql, pg.parameters).some((s) => /^SCAN domains\b/.test(s))).toBe(true);
  });

  it("looks a domain up by id in the transaction's one-row update", () => {
    expect(plan(SQLITE_UPDATE_SIGNALS, [1, 0, 1, 0, "[]", 7])).toEqual([
      "SEARCH domains USING INTEGER PRIMARY KEY (rowid=?)",
    ]);
  });
});
