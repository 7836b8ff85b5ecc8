import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { Checkpoint, JournalEntry } from "../crawler-log.port.js";
import { journalColumns, PG_JOURNAL_INSERT } from "../kysely/journal.queries.js";
import { DOMAIN_COLUMNS, KEY_COLUMNS, PG_DOMAIN_TYPES } from "../kysely/rows.js";
import { mapDerived } from "../map-derived-ddl.js";
import { dedupeStatements, isUniqueViolation } from "../snapshot-bulk-load.js";
import { pgCopyText } from "../snapshot-encode.js";
import type { PgBatch, SnapshotSink } from "../snapshot-sink.port.js";
import { CHANNEL } from "./pg-change-feed.js";

/**
 * Snapshot import on PostgreSQL: one transaction on one pooled connection. Each batch is COPYed
 * into temporary staging tables (not WAL-logged, dropped at commit), then moved by set-based
 * statements: an `INSERT … SELECT … ON CONFLICT` upsert of the domains in file order (new ids
 * follow the file), their records replaced, their reverse records upserted. A row costs the COPY
 * parse and its index entries, not a statement of its own.
 *
 * Into an empty map, the bulk load of snapshot-bulk-load.ts: with the three tables locked, their
 * foreign keys, keys, indexes and the triggers on domains are dropped in the transaction; each
 * batch is COPYed straight into `domains` and `records` with the importer's ids (reverse records
 * into a staging table: an address may be claimed twice); at the end the keys and indexes are
 * built (one sort each), the foreign keys checked (one join each), the derived tables filled, the
 * triggers created and the id sequence moved past the last id.
 */

const COLS = DOMAIN_COLUMNS.join(", ");

const SETUP = `
  create temp table snap_domains (seq integer not null,
    ${DOMAIN_COLUMNS.map((c) => `${c} ${PG_DOMAIN_TYPES[c]}`).join(", ")}) on commit drop;
  create temp table snap_records (seq integer not null, key text, value text, native_key text,
    native_value text) on commit drop;
  create temp table snap_reverse (seq integer not null, address text) on commit drop;
  create temp table snap_ids (seq integer primary key, id bigint not null) on commit drop;`;

/** One batch, set-based, from the staging tables (then emptied for the next). */
const MOVE = `
  with up as (
    insert into domains (${COLS})
    select ${COLS} from snap_domains order by seq
    on conflict (network, provider, token_id) do update set ${DOMAIN_COLUMNS.filter(
      (c) => !KEY_COLUMNS.has(c),
    )
      .map((c) => `${c} = excluded.${c}`)
      .join(", ")}
    returning id, network, provider, token_id)
  insert into snap_ids (seq, id)
  select s.seq, up.id from up join snap_domains s using (network, provider, token_id);
  delete from records where domain_id in (select id from snap_ids);
  insert into records (domain_id, key, value, native_key, native_value)
  select i.id, r.key, r.value, r.native_key, r.native_value from snap_records r join snap_ids i using (seq);
  insert into reverse_records (network, provider, address, domain_id)
  select d.network, d.provider, r.address, i.id
  from snap_reverse r join snap_ids i using (seq) join snap_domains d using (seq)
  on conflict (address, network, provider) do update set domain_id = excluded.domain_id;
  truncate snap_domains, snap_records, snap_reverse, snap_ids;`;

/** COPY of `text` (or of its pieces, sent as they are: not joined into one string first). */
async function copyIn(
  client: pg.PoolClient,
  table: string,
  text: string | string[],
  freeze = false,
): Promise<void> {
  const pieces = (typeof text === "string" ? [text] : text).filter((t) => t !== "");
  if (pieces.length === 0) return;
  const stream = client.query(copyFrom(`copy ${table} from stdin${freeze ? " with (freeze)" : ""}`));
  await pipeline(Readable.from(pieces), stream);
}

/** One batch into the staging tables (rows carry their place), then moved set-based. */
async function writeDomains(client: pg.PoolClient, batch: PgBatch): Promise<void> {
  await copyIn(client, "snap_domains", batch.domains);
  await copyIn(client, "snap_records", batch.records);
  await copyIn(client, "snap_reverse", batch.reverse);
  await client.query(MOVE);
}

/** Batches joined for the bulk load's COPYs: each table's text as the batches' pieces. */
interface PgPieces {
  n: number;
  domains: string[];
  records: string[];
  reverse: string[];
}

/** Domains per message of the parse worker in a bulk load, and per COPY. */
const BULK_MESSAGE = 100;
const COPY_DOMAINS = 1000;

/** The tables whose keys, indexes and foreign keys the bulk load drops and builds again. */
const BULK_TABLES = ["domains", "records", "reverse_records"];
const regclasses = (tables: readonly string[]) => tables.map((t) => `'${t}'::regclass`).join(", ");
const BULK_REGCLASSES = regclasses(BULK_TABLES);
/**
 * With the derived tables (map-derived-ddl.ts): their keys and indexes too, so that their fill is
 * a plain insert and each index one sort (at 3,000,000 domains the fill into `name_holders` with
 * its four indexes cost 15.5 s of server CPU, the fill then the four builds 8.7 s).
 */
const KEYED_REGCLASSES = regclasses([...BULK_TABLES, ...mapDerived("postgres").tables]);

interface BulkLoad {
  /** Primary keys, unique and foreign-key constraints, as `pg_get_constraintdef` gives them. */
  constraints: Array<{ tbl: string; name: string; type: string; def: string }>;
  /** Indexes of no constraint, as `pg_get_indexdef` gives them. */
  indexes: Array<{ tbl: string; name: string; def: string; unique: boolean }>;
  sequence: string;
  next: number;
}

/**
 * Starts the bulk load if the map is empty (checked again once the tables are locked: a writer
 * may have committed in between) and its triggers are the ones map-derived-ddl.ts knows.
 * ACCESS EXCLUSIVE: readers of the three tables wait for the commit (an empty map has nothing to
 * serve anyway), writers too.
 */
async function startBulkLoad(client: pg.PoolClient): Promise<BulkLoad | null> {
  const empty = async () =>
    (await client.query<{ empty: boolean }>("select not exists (select 1 from domains) as empty")).rows[0]
      .empty;
  if (!(await empty())) return null;
  const derived = mapDerived("postgres");
  const known = derived.triggers.flatMap((t) => t.names).sort();
  const { rows: triggers } = await client.query<{ name: string; tbl: string }>(
    `select tgname as name, tgrelid::regclass::text as tbl from pg_trigger
     where tgrelid in (${BULK_REGCLASSES}) and not tgisinternal order by tgname collate "C"`,
  );
  if (triggers.map((t) => t.name).join() !== known.join()) return null;
  await client.query(`lock table ${BULK_TABLES.join(", ")} in access exclusive mode`);
  if (!(await empty())) return null;
  const { rows: constraints } = await client.query<BulkLoad["constraints"][number]>(
    `select conrelid::regclass::text as tbl, conname as name, contype as type, pg_get_constraintdef(oid) as def
     from pg_constraint
     where contype in ('p', 'u', 'f') and (conrelid in (${KEYED_REGCLASSES}) or confrelid in (${KEYED_REGCLASSES}))
     order by conname`,
  );
  const { rows: indexes } = await client.query<BulkLoad["indexes"][number]>(
    `select i.indrelid::regclass::text as tbl, c.relname as name, pg_get_indexdef(i.indexrelid) as def,
       i.indisunique as unique
     from pg_index i join pg_class c on c.oid = i.indexrelid
     where i.indrelid in (${KEYED_REGCLASSES})
       and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
     order by c.relname`,
  );
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  // Foreign keys before the keys they reference; then the rest.
  for (const c of constraints.filter((c) => c.type === "f"))
    await client.query(`alter table ${c.tbl} drop constraint ${quote(c.name)}`);
  for (const c of constraints.filter((c) => c.type !== "f"))
    await client.query(`alter table ${c.tbl} drop constraint ${quote(c.name)}`);
  for (const i of indexes) await client.query(`drop index ${quote(i.name)}`);
  for (const t of triggers) await client.query(`drop trigger ${quote(t.name)} on ${t.tbl}`);
  // Emptied in this transaction: with wal_level = minimal, COPY then skips the WAL.
  await client.query(`truncate ${BULK_TABLES.join(", ")}`);
  const { rows } = await client.query<{ sequence: string }>(
    "select pg_get_serial_sequence('domains', 'id') as sequence",
  );
  const sequence = rows[0].sequence;
  const { rows: seq } = await client.query<{ last: string }>(
    `select case when is_called then last_value else last_value - 1 end as last from ${sequence}`,
  );
  await client.query(`create temp table snap_reverse_bulk (domain_id bigint not null, network text,
    provider text, address text) on commit drop`);
  return { constraints, indexes, sequence, next: Number(seq[0].last) + 1 };
}

/**
 * Appends a batch (rows carry their ids, from the bulk load's `next`), by COPY. FREEZE (the tables
 * were truncated in this transaction): rows are written as frozen, so the first reads after the
 * import (an export, the API) do not set every row's hint bits and write every page again.
 */
async function appendDomains(client: pg.PoolClient, batch: PgPieces): Promise<void> {
  await copyIn(client, `domains (id, ${COLS})`, batch.domains, true);
  await copyIn(client, "records (domain_id, key, value, native_key, native_value)", batch.records, true);
  await copyIn(client, "snap_reverse_bulk", batch.reverse);
}

/**
 * Ends the bulk load: reverse records (an address claimed twice stays with the later line), keys
 * and indexes (the unique ones of no constraint last: a token seen twice is folded into its first
 * line first), derived tables (filled, then their keys and indexes), foreign keys (checked),
 * triggers, the sequence, statistics.
 */
async function finishBulkLoad(client: pg.PoolClient, bulk: BulkLoad): Promise<void> {
  // Sorts for the index builds in the server's memory, not the importer's, and large enough for
  // the records' keys (6 rows a domain) to sort in memory at 1,000,000 domains (256 MB spilled
  // to disk). The built indexes go to the WAL whole (with wal_level above minimal): compressed
  // where the server allows it (a superuser's setting; not allowed, the import goes on without).
  await client.query("set local maintenance_work_mem = '1GB'");
  await client.query("savepoint snap_wal_compression");
  try {
    await client.query("set local wal_compression = lz4");
    await client.query("release savepoint snap_wal_compression");
  } catch {
    await client.query("rollback to savepoint snap_wal_compression");
  }
  await client.query(`insert into reverse_records (network, provider, address, domain_id)
    select distinct on (address, network, provider) network, provider, address, domain_id
    from snap_reverse_bulk order by address, network, provider, domain_id desc`);
  const add = (c: BulkLoad["constraints"][number]) =>
    client.query(`alter table ${c.tbl} add constraint "${c.name.replaceAll('"', '""')}" ${c.def}`);
  // The map's tables first; the derived tables' keys and indexes once they are filled.
  const derived = mapDerived("postgres");
  const ofMap = (x: { tbl: string }) => !derived.tables.includes(x.tbl);
  for (const c of bulk.constraints) if (c.type !== "f" && ofMap(c)) await add(c);
  for (const i of bulk.indexes) if (!i.unique && ofMap(i)) await client.query(i.def);
  for (const i of bulk.indexes) {
    if (!i.unique || !ofMap(i)) continue;
    await client.query("savepoint snap_unique");
    try {
      await client.query(i.def);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      await client.query("rollback to savepoint snap_unique");
      const updatable = DOMAIN_COLUMNS.filter((c) => !KEY_COLUMNS.has(c));
      for (const statement of dedupeStatements(updatable)) await client.query(statement);
      await client.query(i.def);
    }
    await client.query("release savepoint snap_unique");
  }
  for (const table of derived.tables) await client.query(`delete from ${table}`);
  for (const fill of derived.fills) await client.query(fill);
  for (const c of bulk.constraints) if (c.type !== "f" && !ofMap(c)) await add(c);
  for (const i of bulk.indexes) if (!ofMap(i)) await client.query(i.def);
  for (const c of bulk.constraints) if (c.type === "f") await add(c);
  for (const t of derived.triggers) for (const statement of t.triggers) await client.query(statement);
  // Past the last id (not below where it was; nothing to do if it never moved).
  await client.query(
    `select setval('${bulk.sequence}', m, true) from (select greatest(max(id), $1) as m from domains) x where m > 0`,
    [bulk.next - 1],
  );
  // The planner's statistics of tables that were empty: ready for the first queries.
  await client.query(`analyze ${[...BULK_TABLES, ...derived.tables].join(", ")}`);
}

async function writeJournal(client: pg.PoolClient, entries: JournalEntry[]): Promise<number> {
  const { rowCount } = await client.query(PG_JOURNAL_INSERT, journalColumns(entries));
  return rowCount ?? 0;
}

async function writeCheckpoints(client: pg.PoolClient, checkpoints: Checkpoint[]): Promise<void> {
  for (const c of checkpoints)
    await client.query(
      `insert into checkpoints (source_id, chain_id, block_number, block_hash, updated_at, state, error)
       values ($1, $2, $3, $4, $5, $6, $7)
       on conflict (source_id) do update set chain_id = excluded.chain_id, block_number = excluded.block_number,
         block_hash = excluded.block_hash, updated_at = excluded.updated_at, state = excluded.state,
         error = excluded.error`,
      [c.sourceId, c.chainId, c.blockNumber, c.blockHash, c.updatedAt, c.state, c.error],
    );
}

/**
 * Runs `fn` with a snapshot sink in one transaction on a connection of `pool`. The commit
 * publishes `map` on the change channel (NOTIFY in the transaction: heard on commit only), so
 * every process's read caches drop what they held.
 */
export async function withPgSnapshotSink<T>(
  pool: pg.Pool,
  fn: (sink: SnapshotSink) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // One batch's statements run on the server while the importer reads and checks the next
  // batch: `writeDomains` returns once the previous batch is written, not its own.
  let writing: Promise<void> = Promise.resolve();
  const written = async () => {
    const w = writing;
    writing = Promise.resolve();
    await w;
  };
  try {
    await client.query("begin");
    await client.query(SETUP);
    const bulk = await startBulkLoad(client);
    const send = async (run: () => Promise<void>) => {
      await written();
      writing = run();
      // Reported by the next `written()`; until then not an unhandled rejection.
      writing.catch(() => {});
    };
    // The bulk load's batches (rows carry their ids) are joined into COPYs of COPY_DOMAINS: the
    // parse worker sends small messages (snapshot.ts), each COPY costs a few round trips.
    const empty = (): PgPieces => ({ n: 0, domains: [], records: [], reverse: [] });
    let pending = empty();
    const flush = async () => {
      if (pending.n === 0) return;
      const batch = pending;
      pending = empty();
      await send(() => appendDomains(client, batch));
    };
    const write = async (batch: PgBatch) => {
      if (!bulk) return send(() => writeDomains(client, batch));
      bulk.next += batch.n;
      pending.n += batch.n;
      pending.domains.push(batch.domains);
      pending.records.push(batch.records);
      pending.reverse.push(batch.reverse);
      if (pending.n >= COPY_DOMAINS) await flush();
    };
    const result = await fn({
      writeDomains: (batch) => write(pgCopyText(batch, bulk ? bulk.next : null)),
      // The worker numbers the bulk load's rows from here, as `writeDomains` would.
      encoding: bulk
        ? { store: "postgres", bulkNext: bulk.next, batch: BULK_MESSAGE }
        : { store: "postgres", bulkNext: null },
      async writeEncoded(batch) {
        if (batch.store !== "postgres") throw new Error("a batch encoded for another store");
        await write(batch.text);
      },
      async writeJournal(entries) {
        await flush();
        await written();
        return writeJournal(client, entries);
      },
      async writeCheckpoints(checkpoints) {
        await flush();
        await written();
        await writeCheckpoints(client, checkpoints);
      },
    });
    await flush();
    await written();
    if (bulk) await finishBulkLoad(client, bulk);
    await client.query("select pg_notify($1, 'map')", [CHANNEL]);
    await client.query("commit");
    return result;
  } catch (err) {
    // A batch still on the server must finish (or fail) before the rollback is sent.
    await writing.catch(() => {});
    await client.query("rollback").catch((e: Error) => {
      broken = e;
    });
    throw err;
  } finally {
    // A connection whose rollback failed is in an unknown state: destroyed, not reused.
    client.release(broken);
  }
}
