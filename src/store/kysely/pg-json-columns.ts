import { type RawBuilder, sql } from "kysely";

/**
 * PostgreSQL: many rows in one statement, each column passed as one JSON array and turned back
 * into rows by `rows from (json_array_elements_text(…), …)`, which zips them in order.
 *
 * The crawler's and the import's many-row writes passed each column as a PostgreSQL array before
 * (`unnest($1::text[], …)`). node-postgres writes an array parameter as an array literal in
 * JavaScript: each element quoted, its backslashes and quotes escaped by two regular expressions,
 * the pieces concatenated. For the journal's ten columns that was 4-8 µs of the crawler's thread a
 * row; `JSON.stringify` of the same column (V8's native serializer) costs ~1.5 µs, and the server
 * reads JSON as fast as an array literal (bench/HISTORY.md, "Crawl").
 *
 * Values are strings, numbers, booleans or null; `json_array_elements_text` gives each back as text
 * (JSON null as SQL NULL), cast to its column's type by `pgRowsFrom`. A string with a lone UTF-16
 * surrogate, which PostgreSQL's JSON parser refuses, goes with U+FFFD in its place: what
 * node-postgres's UTF-8 encoding of an array literal made of it.
 */
export function jsonColumn(values: readonly unknown[]): string {
  // A string with a lone surrogate, or a bigint (which JSON.stringify refuses): the slow path.
  const slow = values.some(
    (v) => typeof v === "bigint" || (typeof v === "string" && !(v as unknown as WellFormed).isWellFormed()),
  );
  return JSON.stringify(slow ? values.map(wellFormed) : values);
}

/** ES2024's string methods (Node 20 has them; the project compiles against ES2022's library). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

function wellFormed(v: unknown): unknown {
  if (typeof v === "string") return (v as unknown as WellFormed).toWellFormed();
  if (typeof v === "bigint") return v.toString();
  return v;
}

/** A column's PostgreSQL type, as the casts of `pgRowsFrom` name it. */
export type PgColumnType = "text" | "bigint" | "integer";

/** The column list and the select list (each column cast to its type) of the rows' `select`. */
function namesAndCasts(columns: ReadonlyArray<readonly [name: string, type: PgColumnType, ...unknown[]]>) {
  return {
    names: columns.map(([name]) => name).join(", "),
    casts: columns.map(([name, type]) => (type === "text" ? name : `${name}::${type}`)).join(", "),
  };
}

/**
 * `select <columns cast to their types> from rows from (json_array_elements_text($…), …) with
 * ordinality as u(<columns>, row_order) order by row_order`: the rows of `columns` (JSON arrays of
 * equal length, `jsonColumn`) in their order, for an `insert … ${pgRowsFrom(…)}` or a
 * `using (${…})`.
 *
 * @example
 * await sql`insert into t (a, b) ${pgRowsFrom([["a", "text", jsonColumn(as)], ["b", "bigint", jsonColumn(bs)]])}`.execute(db);
 */
export function pgRowsFrom(
  columns: ReadonlyArray<readonly [name: string, type: PgColumnType, json: string]>,
): RawBuilder<unknown> {
  const { names, casts } = namesAndCasts(columns);
  const functions = sql.join(columns.map(([, , json]) => sql`json_array_elements_text(${json}::json)`));
  return sql`select ${sql.raw(casts)} from rows from (${functions}) with ordinality as u(${sql.raw(names)}, row_order) order by row_order`;
}

/**
 * `pgRowsFrom` as the text of a statement run with node-postgres itself: the columns' JSON arrays
 * are its parameters `$1`…`$n`, in column order.
 */
export function pgRowsFromText(columns: ReadonlyArray<readonly [name: string, type: PgColumnType]>): string {
  const { names, casts } = namesAndCasts(columns);
  const functions = columns.map((_, i) => `json_array_elements_text($${i + 1}::json)`).join(", ");
  return `select ${casts} from rows from (${functions}) with ordinality as u(${names}, row_order) order by row_order`;
}
