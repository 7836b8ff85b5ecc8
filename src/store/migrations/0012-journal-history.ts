import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * Time travel reads a token's journal up to a block (or a block time), in chain order
 * (journal-history.queries.ts): `journal_token` (source, token) becomes `journal_token_block`
 * (source, token, block, log index), which finds the entries and hands them out in order without a
 * sort. The crawler's reads of a token's whole journal (`findJournalByTokens`, ordered the same
 * way) use it too. A source's first entry (`findJournalStart`) is `journal_source_block`'s first
 * key for the source.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`create index journal_token_block on journal (source_id, token_id, block_number, log_index)`.execute(
    db,
  );
  await sql`drop index journal_token`.execute(db);
}
