import { sourceIdOf } from "../../src/crawler/sources.js";
import { NETWORKS, type Network } from "../../src/domain/networks.js";
import type { Provider } from "../../src/domain/providers.js";
import { adapterFor } from "../../src/providers/adapters.js";
import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { BulkWorld } from "./seed-bulk.js";

/** Epoch seconds of block 0 of every bench chain; one block a second. */
export const JOURNAL_T0 = Math.floor(Date.UTC(2024, 0, 1) / 1000);
/** The block (on every chain) after the first owner and records and before the second ones. */
export const JOURNAL_MIDDLE = 1_000_000;

/**
 * A history for the domains of `placements` (the time-travel bench): each minted to its owner with
 * its name and an ETH record at block 1 + i, then an A record at JOURNAL_MIDDLE + 1 + i, as the
 * crawler's journal holds them (real token ids of each protocol), and every source's checkpoint at
 * its last block. Straight through better-sqlite3, one transaction.
 */
export function seedJournal(store: SqliteStore, placements: BulkWorld["placements"]): void {
  const db = store.raw;
  const insert = db.prepare(`insert into journal (source_id, chain_id, block_number, block_hash, log_index,
    tx_hash, contract, token_id, event, block_time) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const last = new Map<string, { chainId: number; block: number }>();
  const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
  db.transaction(() => {
    placements.forEach((p, i) => {
      const adapter = adapterFor(p.provider as Provider)!;
      const tokenId = adapter.tokenIdOf(p.name);
      const source = sourceIdOf(p.provider as Provider, p.network as Network);
      const chainId = NETWORKS[p.network as Network].chainId;
      const contract = `0x${"c".repeat(40)}`;
      const first = 1 + i;
      const second = JOURNAL_MIDDLE + 1 + i;
      const events: Array<[number, object]> = [
        [first, { type: "transfer", tokenId, from: `0x${"0".repeat(40)}`, to: p.owner }],
        [first, { type: "name", tokenId, name: p.name }],
        [first, { type: "record", tokenId, nativeKey: "token.ETH.0", nativeValue: p.owner }],
        [second, { type: "record", tokenId, nativeKey: "record.A.0", nativeValue: `192.0.2.${i % 250}` }],
      ];
      events.forEach(([block, event], logIndex) => {
        insert.run(
          source,
          chainId,
          block,
          hash(block),
          logIndex,
          hash(block * 8 + logIndex),
          contract,
          tokenId,
          JSON.stringify(event),
          JOURNAL_T0 + block,
        );
      });
      last.set(source, { chainId, block: Math.max(last.get(source)?.block ?? 0, second) });
    });
    const checkpoint =
      db.prepare(`insert into checkpoints (source_id, chain_id, block_number, block_hash, updated_at, state, error)
      values (?, ?, ?, ?, ?, 'live', null)`);
    for (const [source, c] of last) checkpoint.run(source, c.chainId, c.block, hash(c.block), Date.now());
  })();
}
