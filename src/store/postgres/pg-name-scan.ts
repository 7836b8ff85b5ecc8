import type pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import type { DomainRecord, DomainWithRecords } from "../../domain/types.js";
import {
  type ByNameOptions,
  DOMAIN_READ_COLUMNS,
  type FieldReader,
  readDomain,
  recordKeyCondition,
} from "../kysely/domain-map-scans.queries.js";

/*
 * The zone export's scan on PostgreSQL (domain-map.port.ts `iterateDomainsByName`): the whole map
 * in one statement, streamed in COPY's text format and cut into pages of whole names here.
 *
 * Why one statement and not a page at a time: the server walks the `domains_name` index once and
 * reads each domain's records by their key (a nested loop over `records_pkey`: the records of the
 * subquery come in key order, no sort), and writes plain text fields (COPY: each column's output
 * function, tabs and newlines escaped). A page a statement planned each page again, and building
 * each domain as JSON (json_build_array looks up every argument's type on every row, and
 * json_agg sorts each domain's records in a sort of its own) cost about twice the server's CPU.
 * The rows are a domain's columns then one record's (nulls when it has none), so a domain with n
 * records comes n times, its records in key order.
 *
 * Read-ahead is the socket's: the server writes on while this side works on a page, until the
 * kernel's buffers and the stream's are full (then it waits). One statement is one snapshot: rows
 * written meanwhile are not seen. A caller that stops early ends the statement: the connection is
 * closed, not returned to the pool.
 */

/** The COPY statement of the scan: DOMAIN_READ_COLUMNS, then the record's four columns. */
export function nameScanStatement(recordKeys: readonly string[] | undefined): string {
  const cols = DOMAIN_READ_COLUMNS.map((c) => `d.${c}`).join(", ");
  return `copy (select ${cols}, r.key, r.value, r.native_key, r.native_value
    from domains d left join lateral (
      select r.key, r.value, r.native_key, r.native_value from records r
      where r.domain_id = d.id${recordKeyCondition(recordKeys, "pg")} order by r.key) r on true
    order by d.name, d.id, r.key) to stdout`;
}

const ESCAPES: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };
const NULL = "\\N";

/**
 * A field of COPY's text format as written by the server: `\N` is null, and a backslash escapes
 * itself, the delimiter and the control characters it names (b f n r t v); COPY TO writes no
 * other escape.
 */
export function copyField(s: string): string | null {
  if (s === NULL) return null;
  return s.includes("\\") ? s.replace(/\\(.)/gs, (_, c: string) => ESCAPES[c] ?? c) : s;
}

/** The fields of a COPY row (numbers and flags as text), as the cutter leaves them: unescaped, null as null. */
const COPY_FIELDS: FieldReader<string | null> = {
  int: (s) => Number(s),
  intOrNull: (s) => (s === null ? null : Number(s)),
  text: (s) => s as string,
  textOrNull: (s) => s,
  bool: (s) => s !== "0",
};

const RECORD = DOMAIN_READ_COLUMNS.length;

/**
 * Cuts rows (COPY text lines, in name, id, key order) into domains and pages of about `pageSize`
 * whole names. `push` takes one line; a full page is returned when a new name starts past it.
 */
export function createPageCutter(pageSize: number) {
  let page: DomainWithRecords[] = [];
  let last: DomainWithRecords | null = null;
  return {
    push(line: string): DomainWithRecords[] | null {
      const raw = line.split("\t");
      // A null is `\N` as sent; a text that reads `\N` was sent as `\\N` (copyField).
      const f: (string | null)[] = line.includes("\\")
        ? raw.map((s) => (s.includes("\\") ? copyField(s) : s))
        : raw;
      let full: DomainWithRecords[] | null = null;
      if (last === null || Number(f[0]) !== last.id) {
        const d = readDomain(f, COPY_FIELDS, []);
        if (page.length >= pageSize && d.name !== last!.name) {
          full = page;
          page = [];
        }
        page.push(d);
        last = d;
      }
      if (f[RECORD] !== null) {
        // Record columns are never null (not null in the schema).
        const r: DomainRecord = {
          key: f[RECORD],
          value: f[RECORD + 1] as string,
          nativeKey: f[RECORD + 2] as string,
          nativeValue: f[RECORD + 3] as string,
        };
        last.records.push(r);
      }
      return full;
    },
    /** The last page (empty when the map is). */
    end(): DomainWithRecords[] {
      return page;
    },
  };
}

/**
 * `iterateDomainsByName` on a pool: one COPY on one connection of it (see above). `snapshot`: an
 * exported snapshot (`pg_export_snapshot()` of a repeatable-read transaction still open, a
 * `readSnapshot`'s): the COPY reads the map as that transaction sees it, on a connection of its
 * own, so the transaction's connection stays free for the caller's other reads meanwhile.
 */
export async function* scanDomainsByNamePg(
  pool: pg.Pool,
  pageSize: number,
  opts: ByNameOptions,
  snapshot?: string,
): AsyncIterable<DomainWithRecords[]> {
  const statement = nameScanStatement(opts.recordKeys);
  const client = await pool.connect();
  let done = false;
  try {
    if (snapshot !== undefined) {
      await client.query("begin isolation level repeatable read read only");
      await client.query(`set transaction snapshot '${snapshot.replaceAll("'", "''")}'`);
    }
    const stream = client.query(copyTo(statement));
    // The connection's failure after a stop is the closing's own: no 'error' left unheard.
    stream.on("error", () => {});
    const pages = createPageCutter(pageSize);
    // A line may end in the next chunk: its bytes are kept (cut at a newline byte, never inside a
    // UTF-8 character) and decoded with the rest.
    let rest: Buffer | null = null;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const end = chunk.lastIndexOf(10);
      if (end === -1) {
        rest = rest === null ? chunk : Buffer.concat([rest, chunk]);
        continue;
      }
      const head: Buffer =
        rest === null ? chunk.subarray(0, end) : Buffer.concat([rest, chunk.subarray(0, end)]);
      rest = end + 1 < chunk.length ? chunk.subarray(end + 1) : null;
      for (const line of head.toString("utf8").split("\n")) {
        const full = pages.push(line);
        if (full !== null) yield full;
      }
    }
    if (rest !== null) throw new Error("zone scan: the COPY ended inside a row");
    if (snapshot !== undefined) await client.query("commit");
    const page = pages.end();
    done = true;
    if (page.length > 0) yield page;
  } finally {
    // Stopped early (or failed): the statement is still running on the connection; closing it
    // ends the statement, and the pool opens another when asked.
    client.release(done ? undefined : new Error("zone scan stopped"));
  }
}
