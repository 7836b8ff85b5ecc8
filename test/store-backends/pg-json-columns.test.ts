import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonColumn, pgRowsFrom } from "../../src/store/kysely/pg-json-columns.js";
import { createTestDatabase } from "../helpers/pg.js";

/**
 * The many-row writes' columns as JSON arrays (pg-json-columns.ts), read back by a real server:
 * every value arrives as it was sent, in its row and in the rows' order, and a value PostgreSQL's
 * JSON parser would refuse (a lone surrogate) arrives as node-postgres's array literals made it.
 */
describe("rows passed as JSON columns (PostgreSQL)", () => {
  let db: { url: string; drop: () => Promise<void> };
  let kysely: Kysely<unknown>;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
    kysely = new Kysely({ dialect: new PostgresDialect({ pool }) });
    await sql`create table t (n bigint, label text, i integer, b bigint)`.execute(kysely);
  });
  afterAll(async () => {
    await kysely?.destroy();
    await db?.drop();
  });

  const tricky = [
    'quote " and backslash \\',
    "{braces, commas}",
    "NULL",
    "",
    "new\nline\ttab\rreturn",
    "名前 ünïcödé",
    "emoji 😀 pair",
    "\u0001\u001f control",
    "x".repeat(70_000),
  ];

  it("keeps every value of every row, in order, with the columns' types", async () => {
    const n = tricky.map((_, k) => k);
    const i = tricky.map((_, k) => (k % 2 === 0 ? -k - 1 : null));
    const b = tricky.map((_, k) => (k === 0 ? 9_007_199_254_740_993n : 2 ** 52 + k));
    await sql`insert into t (n, label, i, b) ${pgRowsFrom([
      ["n", "bigint", jsonColumn(n)],
      ["label", "text", jsonColumn(tricky)],
      ["i", "integer", jsonColumn(i)],
      ["b", "bigint", jsonColumn(b)],
    ])}`.execute(kysely);
    const { rows } = await pool.query<{ n: string; label: string; i: number | null; b: string }>(
      "select n, label, i, b from t order by n",
    );
    expect(rows.map((r) => r.label)).toEqual(tricky);
    expect(rows.map((r) => r.i)).toEqual(i);
    expect(rows.map((r) => r.b)).toEqual(b.map(String));
  });

  it("sends a lone surrogate as U+FFFD, as a text array parameter does, instead of failing", async () => {
    await sql`delete from t`.execute(kysely);
    const lone = ["a\ud800b", "\udfff", "ok"];
    await sql`insert into t (n, label) ${pgRowsFrom([
      ["n", "bigint", jsonColumn([1, 2, 3])],
      ["label", "text", jsonColumn(lone)],
    ])}`.execute(kysely);
    const { rows: viaJson } = await pool.query<{ label: string }>("select label from t order by n");
    const { rows: viaArray } = await pool.query<{ label: string }>(
      "select label from unnest($1::text[]) with ordinality as u(label, k) order by k",
      [lone],
    );
    expect(viaJson.map((r) => r.label)).toEqual(["a\ufffdb", "\ufffd", "ok"]);
    expect(viaJson).toEqual(viaArray);
  });

  it("keeps the rows' order through the ordinality (ids follow it)", async () => {
    await sql`delete from t`.execute(kysely);
    const order = Array.from({ length: 5_000 }, (_, k) => 5_000 - k);
    await sql`insert into t (n, label) ${pgRowsFrom([
      ["n", "bigint", jsonColumn(order)],
      ["label", "text", jsonColumn(order.map(String))],
    ])}`.execute(kysely);
    const { rows } = await pool.query<{ n: string }>("select n from t order by ctid");
    expect(rows.map((r) => Number(r.n))).toEqual(order);
  });

  it("refuses columns of different lengths with the server's error, writing nothing", async () => {
    await sql`delete from t`.execute(kysely);
    // rows from () pads a shorter column with NULL: a NOT NULL column turns that into an error.
    await sql`create table strict_t (n bigint not null, label text not null)`.execute(kysely);
    await expect(
      sql`insert into strict_t (n, label) ${pgRowsFrom([
        ["n", "bigint", jsonColumn([1, 2])],
        ["label", "text", jsonColumn(["one"])],
      ])}`.execute(kysely),
    ).rejects.toThrow(/null value/);
    const { rows } = await pool.query("select count(*)::int as c from strict_t");
    expect(rows[0].c).toBe(0);
  });
});
