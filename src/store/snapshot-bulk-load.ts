/**
 * The snapshot import's bulk load, shared by both backends (sqlite-snapshot-import.ts,
 * pg-snapshot-import.ts). When the map is empty (checked inside the import's transaction), the
 * importer does what a database's own restore does: it drops the secondary indexes of
 * `domains`, `records` and `reverse_records` and the triggers on `domains`, appends the rows in
 * file order with ids it assigns itself (no upsert, no id lookup, no per-row trigger), then builds
 * the indexes (one sort each), fills the derived tables set-based (map-derived-ddl.ts) and creates
 * the triggers again. All of it is one transaction: DDL is transactional on both backends, so a
 * bad line anywhere leaves the store, indexes and triggers included, as it was.
 *
 * A token may appear twice in a file, in two batches: the unique index on (network, provider,
 * token id) then fails to build, and `DEDUPE` makes the map what the upserting path makes of the
 * same file before the index is built again: the token keeps the id (the place) of its first line
 * and the columns and records of its last, and its reverse records point at that id.
 */

/** Is `err` a unique-constraint violation (SQLite: SQLITE_CONSTRAINT_UNIQUE; PostgreSQL: 23505)? */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "23505";
}

/**
 * Folds every token's later lines into its first (same SQL on both backends). Run with the
 * indexes other than the token's in place, so each step is an index lookup.
 */
export function dedupeStatements(updatable: readonly string[]): string[] {
  return [
    `create temp table snap_dup_groups as
      select network, provider, token_id, min(id) as keep, max(id) as last
      from domains group by network, provider, token_id having count(*) > 1`,
    `create temp table snap_dup_ids as
      select d.id, g.keep, g.last from domains d join snap_dup_groups g
        on d.network = g.network and d.provider = g.provider and d.token_id = g.token_id`,
    `update domains set ${updatable.map((c) => `${c} = l.${c}`).join(", ")}
      from snap_dup_groups g join domains l on l.id = g.last where domains.id = g.keep`,
    // The last line's records replace all others (the upserting path replaces them line by line).
    "delete from records where domain_id in (select id from snap_dup_ids where id <> last)",
    `update records set domain_id = (select keep from snap_dup_ids i where i.id = records.domain_id)
      where domain_id in (select last from snap_dup_groups)`,
    `update reverse_records set domain_id = (select keep from snap_dup_ids i where i.id = reverse_records.domain_id)
      where domain_id in (select id from snap_dup_ids where id <> keep)`,
    "delete from domains where id in (select id from snap_dup_ids where id <> keep)",
    "drop table snap_dup_ids",
    "drop table snap_dup_groups",
  ];
}
