import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

/** What a bench world holds, for the load generator to query. */
export interface BulkWorld {
  names: string[];
  collisionNames: string[];
  owners: string[];
  /** Every domain written: name, provider, network, owner (journal-seed.ts writes their history). */
  placements: Array<{ name: string; provider: string; network: string; owner: string }>;
}

const TLDS = ["wallet", "crypto", "eth", "x", "nft", "dao", "blockchain", "bitcoin", "polygon", "888"];
const PAIRS = [
  ["NAMESPACE_A", "POLYGON", "0x5fbdb2315678afecb367f032d93f642f64180aa3"],
  ["NAMESPACE_A", "BSC", "0x5fbdb2315678afecb367f032d93f642f64180aa3"],
  ["NAMESPACE_B", "ETHEREUM", "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512"],
  ["NAMESPACE_B", "POLYGON", "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512"],
  ["NAMESPACE_C", "ETHEREUM", "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0"],
] as const;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

/**
 * Writes `count` domains with six records each straight through better-sqlite3 in one transaction
 * (the store's upsert path costs ~100 µs a row; this costs ~5). One name in ten exists in two or
 * three namespaces (collisions); owners hold ~5 domains each and half of them set a reverse record.
 */
export function seedBulk(store: SqliteStore, count: number): BulkWorld {
  const db = store.raw;
  const insertDomain =
    db.prepare(`insert into domains (provider, network, token_id, name, rname, sld, tld, owner,
    contract_address, resolver, registered_at, registered_block, expires_at, last_update_block, last_update_at,
    base_score, spam, csam_ok, kyc, tags) values (?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, null, ?, ?, ?, 0, 1, ?, '[]')`);
  const insertRecord = db.prepare(
    "insert into records (domain_id, key, value, native_key, native_value) values (?, ?, ?, ?, ?)",
  );
  const insertReverse = db.prepare(
    "insert or ignore into reverse_records (network, provider, address, domain_id) values (?, ?, ?, ?)",
  );
  const owners = Array.from({ length: Math.ceil(count / 5) }, (_, i) => `0x${hex(i + 1, 40)}`);
  const names: string[] = [];
  const collisionNames: string[] = [];
  const placements: BulkWorld["placements"] = [];
  const t0 = Date.UTC(2024, 0, 1);
  db.transaction(() => {
    let written = 0;
    for (let i = 0; written < count; i++) {
      const sld = `name${i}`;
      const tld = TLDS[i % TLDS.length];
      const name = `${sld}.${tld}`;
      const copies = i % 10 === 0 ? 2 + (i % 20 === 0 ? 1 : 0) : 1;
      names.push(name);
      if (copies > 1) collisionNames.push(name);
      for (let c = 0; c < copies && written < count; c++, written++) {
        const [provider, network, contract] = PAIRS[(i + c) % PAIRS.length];
        const owner = owners[written % owners.length];
        placements.push({ name, provider, network, owner });
        const r = insertDomain.run(
          provider,
          network,
          `0x${hex(written + 1, 64)}`,
          name,
          `${tld}.${sld}`,
          sld,
          tld,
          owner,
          contract,
          t0 + written * 1000,
          written + 1,
          written + 1,
          t0 + written * 1000 + 500,
          40 + ((i * 7 + c * 13) % 60),
          written % 17 === 0 ? 1 : 0,
        );
        const id = Number(r.lastInsertRowid);
        const recs: Array<[string, string]> = [
          ["token.ETH.0", owner],
          ["redirect.WEBSITE.0", `https://${sld}.example.com`],
          ["record.A.0", `192.0.2.${written % 250}`],
          ["record.TXT.0", `https://${sld}.example.com/verify`],
          ["profile.OWNER.fullname", `Owner ${written}`],
          ["social.TWITTER.0", `@${sld}`],
        ];
        for (const [k, v] of recs) insertRecord.run(id, k, v, k, v);
        if (written < owners.length && written % 2 === 0) insertReverse.run(network, provider, owner, id);
      }
    }
  })();
  return { names, collisionNames, owners, placements };
}

/** The same order on every run (a fixed-seed Fisher–Yates): the benches' query order. */
export function shuffled<T>(xs: T[]): T[] {
  const out = [...xs];
  let seed = 42;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
