import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";

/**
 * The crawler's additions: the block time of each journal entry (so a replay recomputes
 * registration and update times without asking the chain again), and the hashes of recent (unfinalized) blocks per source, kept across
 * restarts so that a reorg is still detected after one.
 *
 * The journal's uniqueness moves from (chain, block hash, log index) to (chain, block hash, log
 * index, token): one log may concern several tokens (an ERC-1155 TransferBatch of the ENS
 * NameWrapper), and the journal is read per token.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await sql`alter table journal add column block_time bigint`.execute(db);
  await sql`drop index journal_position`.execute(db);
  await sql`create unique index journal_position_token on journal (chain_id, block_hash, log_index, token_id)`.execute(
    db,
  );
  await sql`create table crawler_blocks (
    source_id text not null, block_number bigint not null, block_hash text not null, parent_hash text not null,
    primary key (source_id, block_number))`.execute(db);
}
