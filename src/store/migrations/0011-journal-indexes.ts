import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * The journal's indexes, each for a query (crawler-log.queries.ts):
 * - `journal_position_token` (chain, block hash, log index, token), unique: a range applied again
 *   inserts nothing (`on conflict do nothing`);
 * - `journal_token` (source, token): a token's events, read for every token a range touches;
 * - `journal_source_block` (source, block): the rollback's reads and delete of a source's entries
 *   above a block (`findJournalTokensAfter`, `deleteJournalAfter`, `findJournalAfter`).
 * `journal_block` (chain, block) served none of them: every journal query names the source, not
 * the chain, so the rollback scanned the source's whole journal while every insert paid for an
 * index nothing read. It becomes `journal_source_block`, whose inserts land at its end as the
 * chain is read in order.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`drop index journal_block`.execute(db);
  await sql`create index journal_source_block on journal (source_id, block_number)`.execute(db);
}
