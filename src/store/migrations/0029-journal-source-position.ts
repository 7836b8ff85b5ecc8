import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * The journal's uniqueness and the rollback's reads on one index, in the order the crawler writes:
 * `journal_source_position` (source, block, log index, token), unique, replaces
 * `journal_position_token` (chain, block hash, log index, token) and `journal_source_block`
 * (source, block).
 *
 * The old unique key led with a block hash: every crawled event inserted its entry at a random
 * place of a 169 MB-a-million-entries index, and each range's commit wrote one page of it per
 * entry once the index outgrew the cache. The new key grows at its end as the chain is read
 * (bench/HISTORY.md, "The journal's uniqueness in block order"). It names the same entries: the
 * crawler keeps one fork per source in the journal (a reorg deletes a source's entries above the
 * common ancestor before the new fork's are written), so a source's block number stands for the
 * block hash; a range applied again is still skipped (`on conflict do nothing`), and the rollback's
 * queries by source and block (`findJournalTokensAfter`, `deleteJournalAfter`, `findJournalAfter`)
 * read the new index's first two columns.
 *
 * A store that holds two entries at one position (a fork the crawler failed to delete, which it
 * should not have written) keeps the one journaled last, as a replay would.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`drop index journal_position_token`.execute(db);
  // Built first: on a store without such a pair (every store the crawler kept) this is the whole
  // cost; the delete below probes the journal once per entry (~5x the build).
  await sql`savepoint journal_source_position`.execute(db);
  try {
    await createIndex(db);
  } catch {
    await sql`rollback to savepoint journal_source_position`.execute(db);
    await sql`delete from journal where token_id is not null and exists (
        select 1 from journal later
        where later.source_id = journal.source_id and later.block_number = journal.block_number
          and later.log_index = journal.log_index and later.token_id = journal.token_id
          and later.id > journal.id)`.execute(db);
    await createIndex(db);
  }
  await sql`release savepoint journal_source_position`.execute(db);
  await sql`drop index journal_source_block`.execute(db);
}

function createIndex(db: Kysely<unknown>) {
  return sql`create unique index journal_source_position on journal (source_id, block_number, log_index, token_id)`.execute(
    db,
  );
}
