import { DOMAIN_COLUMNS, domainColumns, safeText } from "./kysely/rows.js";
import type { PgBatch, SnapshotDomain, SqliteBatch } from "./snapshot-sink.port.js";

/*
 * A batch of checked snapshot domains in the form a backend writes it, built where the lines are
 * parsed (the parse worker, snapshot-parse-pool.ts) so that the writing thread only binds or
 * sends: SQLite gets the bound values column by column, PostgreSQL the text of its COPYs.
 */

/** The batch's values as SQLite binds them (what `domainColumns` and `safeText` make of a domain). */
export function sqliteColumns(batch: SnapshotDomain[]): SqliteBatch {
  const out: SqliteBatch = {
    n: batch.length,
    domains: [],
    recordCounts: [],
    records: [],
    reverseCounts: [],
    reverse: [],
  };
  for (const { domain, records, reverse } of batch) {
    const c = domainColumns(domain);
    for (const k of DOMAIN_COLUMNS) out.domains.push(c[k]);
    out.recordCounts.push(records.length);
    for (const r of records)
      out.records.push(safeText(r.key), safeText(r.value), safeText(r.nativeKey), safeText(r.nativeValue));
    out.reverseCounts.push(reverse.length);
    for (const a of reverse) out.reverse.push(a);
  }
  return out;
}

/*
 * The packed form: every value as text, joined by NUL, which none may contain (a batch with a NUL
 * left after safeText, in an owner say, is handed over as columns instead). One string crosses
 * between threads for a memory copy; `split` gives the values back for ~3 µs a domain, a third of
 * what structured cloning the columns costs.
 */
const SEP = "\u0000";
type Kind = "text" | "textOrNull" | "int" | "intOrNull";
const INT_OR_NULL = new Set(["registered_at", "registered_block", "expires_at"]);
const INT = new Set(["last_update_block", "last_update_at", "base_score", "spam", "csam_ok", "kyc"]);
const KINDS: readonly Kind[] = DOMAIN_COLUMNS.map((c) =>
  c === "resolver" ? "textOrNull" : INT_OR_NULL.has(c) ? "intOrNull" : INT.has(c) ? "int" : "text",
);

/**
 * The columns that may still hold a NUL: `domainColumns` passes them as given (names, records and
 * tags cannot: safeText, JSON.stringify); provider and network are checked enum values.
 */
const RAW_TEXT = DOMAIN_COLUMNS.flatMap((c, k) =>
  c === "token_id" || c === "owner" || c === "contract_address" || c === "resolver" ? [k] : [],
);

/** The batch as one string, or null when a value holds a NUL. */
export function packSqlite(b: SqliteBatch): string | null {
  const W = DOMAIN_COLUMNS.length;
  for (let d = 0; d < b.n; d++)
    for (const k of RAW_TEXT) {
      const v = b.domains[d * W + k];
      if (typeof v === "string" && v.includes(SEP)) return null;
    }
  for (const a of b.reverse) if (a.includes(SEP)) return null;
  // Appended (V8 joins the pieces once, when the string is sent), not an array joined: ~1.5 µs a
  // domain less (measured on the bench's synthetic lines, the same string).
  let out = "";
  let r = 0;
  let a = 0;
  for (let d = 0; d < b.n; d++) {
    for (let k = 0; k < W; k++) {
      const v = b.domains[d * W + k];
      out += v === null ? SEP : KINDS[k] === "textOrNull" ? `=${v}${SEP}` : `${v}${SEP}`;
    }
    const rc = b.recordCounts[d];
    out += `${rc}${SEP}`;
    for (let i = 0; i < rc * 4; i++) out += `${b.records[r++]}${SEP}`;
    const ac = b.reverseCounts[d];
    out += `${ac}`;
    for (let i = 0; i < ac; i++) out += `${SEP}${b.reverse[a++]}`;
    if (d < b.n - 1) out += SEP;
  }
  return out;
}

/** The packed strings of a `packSqlite` string, in order. */
export function packedParts(text: string): string[] {
  return text.split(SEP);
}

/** A packed string as the value of domain column `k` (DOMAIN_COLUMNS' order). */
export function packedValue(k: number, v: string): string | number | null {
  const kind = KINDS[k];
  return kind === "text"
    ? v
    : kind === "textOrNull"
      ? v === ""
        ? null
        : v.slice(1)
      : kind === "int" || v !== ""
        ? Number(v)
        : null;
}

/** `packSqlite`'s string back as values. */
export function unpackSqlite(text: string, n: number): SqliteBatch {
  const p = packedParts(text);
  const out: SqliteBatch = { n, domains: [], recordCounts: [], records: [], reverseCounts: [], reverse: [] };
  const W = DOMAIN_COLUMNS.length;
  let i = 0;
  for (let d = 0; d < n; d++) {
    for (let k = 0; k < W; k++) out.domains.push(packedValue(k, p[i++]));
    const rc = Number(p[i++]);
    out.recordCounts.push(rc);
    for (let j = 0; j < rc * 4; j++) out.records.push(p[i++]);
    const ac = Number(p[i++]);
    out.reverseCounts.push(ac);
    for (let j = 0; j < ac; j++) out.reverse.push(p[i++]);
  }
  return out;
}

const ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const SPECIAL = /[\\\n\r\t]/g;
/** What COPY escapes, and NUL (safeText's): one scan tells the common string that needs neither. */
const HAS_SPECIAL_OR_NUL = /[\\\n\r\t\0]/;

/** A field of COPY's text format; strings are stored as on the port's path (safeText: no NUL). */
export function copyField(v: string | number | null): string {
  if (v === null) return "\\N";
  if (typeof v === "number") return String(v);
  if (!HAS_SPECIAL_OR_NUL.test(v)) return v;
  return safeText(v).replace(SPECIAL, (m) => ESCAPES[m]);
}

/**
 * The batch as the COPY text of PostgreSQL's staging tables (`bulkNext` null: rows carry their
 * place in the batch) or of the bulk load (rows carry their ids, `bulkNext` onwards; reverse
 * records with their network and provider).
 */
export function pgCopyText(batch: SnapshotDomain[], bulkNext: number | null): PgBatch {
  let domains = "";
  let records = "";
  let reverse = "";
  for (const [i, { domain, records: recs, reverse: addresses }] of batch.entries()) {
    const first = bulkNext === null ? i : bulkNext + i;
    const c = domainColumns(domain);
    domains += `${first}`;
    for (const k of DOMAIN_COLUMNS) domains += `\t${copyField(c[k])}`;
    domains += "\n";
    for (const r of recs)
      records += `${first}\t${copyField(r.key)}\t${copyField(r.value)}\t${copyField(r.nativeKey)}\t${copyField(r.nativeValue)}\n`;
    const where = bulkNext === null ? "" : `\t${copyField(domain.network)}\t${copyField(domain.provider)}`;
    for (const a of addresses) reverse += `${first}${where}\t${copyField(a)}\n`;
  }
  return { n: batch.length, domains, records, reverse };
}
