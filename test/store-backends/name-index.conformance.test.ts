import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { encodeAbiParameters, type Hex, pad } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyRange, rollbackTo } from "../../src/crawler/apply-range.js";
import type { FetchedLog } from "../../src/crawler/chain-reader.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { journalEntriesOf } from "../../src/crawler/journal-entries.js";
import { fillSkeletons } from "../../src/jobs/rescore.job.js";
import { namehash } from "../../src/providers/namehash.js";
import { UNS_TOPICS } from "../../src/providers/uns/uns-events.js";
import { unsAdapter } from "../../src/providers/uns/uns.adapter.js";
import { skeleton } from "../../src/scoring/skeleton.js";
import { exportSnapshot, importSnapshot } from "../../src/store/snapshot.js";
import type { Store } from "../../src/store/store.js";
import { NEUTRAL_SIGNALS } from "../crawler/crawler-harness.js";
import { rawDb } from "../helpers/raw-db.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

/**
 * The name index of migration 0009 (name_holders: holders per name, skeleton per name), kept by
 * triggers on domains, checked against a from-scratch grouping over domains after every kind of
 * write: port upserts and deletes, renames, a reorg's rollback, raw multi-row and INSERT … SELECT
 * bulk inserts, a snapshot re-import, clearing the index.
 */

/** Every row of the index, sorted by name. */
async function indexRows(store: Store): Promise<Array<[string, number]>> {
  const { rows } = await sql<{ name: string; holders: number | string }>`
    select name, holders from name_holders`.execute(rawDb(store));
  return rows.map((r): [string, number] => [r.name, Number(r.holders)]).sort(([a], [b]) => (a < b ? -1 : 1));
}

/** The same from scratch: group by name over every domain. */
async function scratchRows(store: Store): Promise<Array<[string, number]>> {
  const { rows } = await sql<{ name: string; n: number | string }>`
    select name, count(*) as n from domains group by name`.execute(rawDb(store));
  return rows.map((r): [string, number] => [r.name, Number(r.n)]).sort(([a], [b]) => (a < b ? -1 : 1));
}

async function collect<T>(it: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of it) out.push(...page);
  return out;
}

/** The index equals the from-scratch grouping, and the port's paged reads agree with it. */
async function expectExact(store: Store): Promise<void> {
  const scratch = await scratchRows(store);
  expect(await indexRows(store)).toEqual(scratch);
  const shared = scratch.filter(([, n]) => n > 1);
  expect(await collect(store.scoring.iterateSharedNames(2))).toEqual(shared.map(([name]) => name).sort());
  // Resumed after a name (a settings job's cursor): the rest, in order.
  const names = shared.map(([name]) => name).sort();
  if (names.length > 0)
    expect(await collect(store.scoring.iterateSharedNames(2, names[0]))).toEqual(names.slice(1));
  expect(new Map(shared)).toEqual(await store.scoring.findSharedNames());
  expect(await store.scoring.countSharedNames()).toBe(shared.length);
}

// A UNS token on Ethereum, minted and named `shared.crypto` in block 1, burned in block 3.
const REGISTRY = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const ZERO = "0x0000000000000000000000000000000000000000";
const source: CrawlerSource = {
  id: "uns-ethereum",
  provider: "NAMESPACE_B",
  network: "ETHEREUM",
  chainId: 1,
  adapter: unsAdapter,
  contracts: { addresses: { registry: REGISTRY }, startBlock: 1 },
  rpcUrl: "http://127.0.0.1:1",
};
const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;
const tokenOf = (name: string) => namehash(name) as Hex;
function log(block: number, logIndex: number, topics: Hex[], data: Hex = "0x"): FetchedLog {
  return {
    chainId: 1,
    blockNumber: block,
    blockHash: hashOf(block),
    logIndex,
    transactionHash: hashOf(1_000 + block * 10 + logIndex),
    address: REGISTRY,
    topics,
    data,
    blockTime: 1_700_000_000 + block * 12,
  };
}
const mint = (block: number, i: number, name: string) => [
  log(block, i, [UNS_TOPICS.Transfer, pad(ZERO as Hex), pad(ALICE as Hex), tokenOf(name)]),
  log(block, i + 1, [UNS_TOPICS.NewURI, tokenOf(name)], encodeAbiParameters([{ type: "string" }], [name])),
];
const burn = (block: number, i: number, name: string) =>
  log(block, i, [UNS_TOPICS.Transfer, pad(ALICE as Hex), pad(ZERO as Hex), tokenOf(name)]);

async function apply(store: Store, logs: FetchedLog[], to: number): Promise<void> {
  await applyRange(
    store,
    source,
    {
      entries: journalEntriesOf(source, logs, new Map(), []),
      checkpoint: {
        sourceId: source.id,
        chainId: 1,
        blockNumber: to,
        blockHash: hashOf(to),
        updatedAt: 0,
        state: "live",
        error: null,
      },
      recentBlocks: [...new Set(logs.map((l) => l.blockNumber)), to].map((n) => ({
        blockNumber: n,
        blockHash: hashOf(n),
        parentHash: hashOf(n - 1),
      })),
      pruneBelow: 0,
    },
    NEUTRAL_SIGNALS,
  );
}

const DOMAIN_COLUMNS = `provider, network, token_id, name, sld, tld, owner, contract_address,
  last_update_block, last_update_at, rname`;

describe.each(STORE_BACKENDS)("the name index on $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let dir: string;

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
    dir = mkdtempSync(join(tmpdir(), "omniname-name-index-"));
  });
  afterAll(async () => {
    await cleanup?.();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await store.clearChainIndex();
  });

  it("counts the holders of each name across upserts, renames and deletes", async () => {
    const a = await store.domainMap.upsertDomain(testDomain({ name: "first.web3" }));
    await store.domainMap.upsertDomain(
      testDomain({ name: "first.web3", network: "BSC", tokenId: tokenIdOf(2) }),
    );
    const c = await store.domainMap.upsertDomain(
      testDomain({ name: "first.web3", provider: "NAMESPACE_C", tokenId: tokenIdOf(3) }),
    );
    await store.domainMap.upsertDomains([
      testDomain({ name: "alone.web3", tokenId: tokenIdOf(4) }),
      testDomain({ name: "pair.web3", tokenId: tokenIdOf(5) }),
      testDomain({ name: "pair.web3", tokenId: tokenIdOf(6), network: "BSC" }),
    ]);
    await expectExact(store);
    expect(await store.scoring.findNameHolders(["first.web3", "alone.web3", "nope.web3"])).toEqual(
      new Map([
        ["first.web3", 3],
        ["alone.web3", 1],
      ]),
    );
    // The same token written again (a transfer): an update, not another holder.
    await store.domainMap.upsertDomain(
      testDomain({ name: "first.web3", owner: "0x00000000000000000000000000000000000000bb" }),
    );
    await expectExact(store);
    // A token renamed (its projection changed): one holder moves.
    await store.domainMap.upsertDomain(
      testDomain({ name: "other.web3", provider: "NAMESPACE_C", tokenId: tokenIdOf(3) }),
    );
    expect(await store.scoring.findNameHolders(["first.web3", "other.web3"])).toEqual(
      new Map([
        ["first.web3", 2],
        ["other.web3", 1],
      ]),
    );
    await expectExact(store);
    await store.domainMap.deleteDomain(a);
    await store.domainMap.deleteDomain(c);
    await expectExact(store);
    expect(await store.scoring.findNameHolders(["other.web3"])).toEqual(new Map());
  });

  it("stays exact through a range, a reorg's rollback and the replay of the canonical blocks", async () => {
    // NAMESPACE_A holds shared.crypto and gone.crypto already; the crawled source mints both too.
    await store.domainMap.upsertDomain(testDomain({ name: "shared.crypto", tld: "crypto", sld: "shared" }));
    await store.domainMap.upsertDomain(
      testDomain({ name: "gone.crypto", tld: "crypto", sld: "gone", tokenId: tokenIdOf(2) }),
    );
    await apply(store, [...mint(1, 0, "shared.crypto"), ...mint(1, 2, "solo.crypto")], 1);
    await expectExact(store);
    await apply(store, [...mint(2, 0, "gone.crypto"), burn(3, 0, "solo.crypto")], 3);
    expect(await store.scoring.findNameHolders(["shared.crypto", "gone.crypto", "solo.crypto"])).toEqual(
      new Map([
        ["shared.crypto", 2],
        ["gone.crypto", 2],
      ]),
    );
    await expectExact(store);
    // Blocks 2 and 3 are orphaned: the mint is undone, the burnt token comes back.
    await rollbackTo(store, source, { blockNumber: 1, blockHash: hashOf(1) }, "live", 0, NEUTRAL_SIGNALS);
    expect(await store.scoring.findNameHolders(["gone.crypto", "solo.crypto"])).toEqual(
      new Map([
        ["gone.crypto", 1],
        ["solo.crypto", 1],
      ]),
    );
    await expectExact(store);
    await apply(store, [...mint(2, 0, "gone.crypto")], 2);
    await expectExact(store);
    await rollbackTo(store, source, { blockNumber: 0, blockHash: hashOf(0) }, "live", 0, NEUTRAL_SIGNALS);
    await expectExact(store);
    expect(await store.scoring.countSharedNames()).toBe(0);
  });

  it("counts raw multi-row inserts and INSERT … SELECT (the bulk import's statements)", async () => {
    const db = rawDb(store);
    const row = (i: number, name: string, network = "POLYGON") =>
      sql.raw(
        `('NAMESPACE_A', '${network}', '${tokenIdOf(i)}', '${name}', 'x', 'web3', '0xa', '0xc', 1, 1, '')`,
      );
    await sql`insert into domains (${sql.raw(DOMAIN_COLUMNS)}) values ${sql.join([
      row(1, "a.web3"),
      row(2, "a.web3", "BSC"),
      row(3, "b.web3"),
      row(4, "c.web3"),
    ])}`.execute(db);
    await expectExact(store);
    // A staging table, then INSERT … SELECT into domains (what COPY-based imports do on PostgreSQL).
    await sql`create temporary table staging as select * from domains where 1 = 0`.execute(db);
    await sql`insert into staging (${sql.raw(DOMAIN_COLUMNS)}) values ${sql.join([
      row(5, "b.web3", "BSC"),
      row(6, "c.web3", "BSC"),
      row(7, "c.web3", "AURORA"),
      row(8, "d.web3"),
    ])}`.execute(db);
    await sql`insert into domains (${sql.raw(DOMAIN_COLUMNS)})
      select ${sql.raw(DOMAIN_COLUMNS)} from staging`.execute(db);
    await sql`drop table staging`.execute(db);
    expect(await store.scoring.findNameHolders(["a.web3", "b.web3", "c.web3", "d.web3"])).toEqual(
      new Map([
        ["a.web3", 2],
        ["b.web3", 2],
        ["c.web3", 3],
        ["d.web3", 1],
      ]),
    );
    await expectExact(store);
    await sql`delete from domains where network = 'BSC'`.execute(db);
    await expectExact(store);
    await store.clearChainIndex();
    expect(await indexRows(store)).toEqual([]);
  });

  it("stays exact through a snapshot export and re-imports into another store", async () => {
    for (let i = 1; i <= 30; i++)
      await store.domainMap.upsertDomain(
        testDomain({ name: `n${i % 7}.web3`, tokenId: tokenIdOf(i), network: i % 2 ? "POLYGON" : "BSC" }),
      );
    await expectExact(store);
    const file = join(dir, `snap-${backend.name}.jsonl`);
    await exportSnapshot(store, file);
    const other = await backend.open();
    try {
      await importSnapshot(other.store, file);
      await expectExact(other.store);
      expect(await indexRows(other.store)).toEqual(await indexRows(store));
      await importSnapshot(other.store, file);
      expect(await indexRows(other.store)).toEqual(await indexRows(store));
    } finally {
      await other.cleanup();
    }
  });

  it("stores each new name's skeleton once, and groups the lookalikes in pages", async () => {
    const names = [
      "paypal.web3",
      "p\u0430ypal.web3",
      "rnicro.web3",
      "micro.web3",
      "alone.web3",
      "paypa1.web3",
    ];
    for (const [i, name] of names.entries())
      await store.domainMap.upsertDomain(testDomain({ name, tokenId: tokenIdOf(i + 1) }));
    await store.domainMap.upsertDomain(
      testDomain({ name: "paypal.web3", tokenId: tokenIdOf(99), network: "BSC" }),
    );
    expect(await fillSkeletons(store.scoring)).toBe(names.length);
    expect(await fillSkeletons(store.scoring)).toBe(0);
    const groups = await collect(store.scoring.iterateLookalikeGroups(1));
    // The old in-memory computation: a Map of skeleton → distinct names over every domain.
    const bySkeleton = new Map<string, Set<string>>();
    for await (const page of store.scoring.iterateDomainNames(2))
      for (const n of page) bySkeleton.set(skeleton(n), (bySkeleton.get(skeleton(n)) ?? new Set()).add(n));
    const expected = [...bySkeleton.values()].filter((s) => s.size > 1).map((s) => [...s].sort());
    const sorted = (gs: string[][]) => gs.map((g) => [...g].sort()).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    expect(sorted(groups)).toEqual(sorted(expected));
    expect(groups.length).toBe(2);
  });
});
