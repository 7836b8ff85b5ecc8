import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { exportSnapshot, importSnapshot } from "../../src/store/snapshot.js";
import type { Store } from "../../src/store/store.js";
import { writeSyntheticSnapshot } from "../../bench/support/synthetic-snapshot.js";
import { createTestDatabase } from "../helpers/pg.js";
import { rawDb } from "../helpers/raw-db.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

const ALICE = "0x00000000000000000000000000000000000a11ce";

async function dump(store: Store): Promise<string[]> {
  const lines: string[] = [];
  for await (const page of store.domainMap.iterateDomains(100)) {
    for (const { id, ...d } of page) lines.push(JSON.stringify(d));
  }
  lines.push(
    ...(await store.domainMap.findReverse(ALICE, {})).map(
      (r) => `reverse ${r.address} ${r.network} ${r.provider}`,
    ),
  );
  lines.push(...(await store.crawlerLog.listCheckpoints()).map((c) => JSON.stringify(c)));
  lines.push(...(await store.crawlerLog.findJournalAfter("src", -1)).map((j) => JSON.stringify(j)));
  return lines.sort();
}

describe("snapshot export and import", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-snap-"));
  let source: Store;
  let pg: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    source = await createStore({ dataDir: join(dir, "a") });
    pg = await createTestDatabase();
    for (let i = 0; i < 1234; i++) {
      const id = await source.domainMap.upsertDomain({
        provider: i % 2 ? "NAMESPACE_A" : "NAMESPACE_B",
        network: "POLYGON",
        tokenId: `0x${i.toString(16).padStart(64, "0")}`,
        name: `n${i}.wallet`,
        sld: `n${i}`,
        tld: "wallet",
        owner: ALICE,
        contractAddress: "0xc0",
        resolver: null,
        registeredAt: 1000 + i,
        registeredBlock: i,
        expiresAt: i === 7 ? 5 : null,
        lastUpdateBlock: i,
        lastUpdateAt: 2000 + i,
        baseScore: i % 100,
        spam: i === 3,
        csamOk: true,
        kyc: false,
        tags: i === 3 ? ["spam:test"] : [],
      });
      await source.domainMap.replaceRecords(id, [
        {
          key: "record.A.0",
          value: `10.0.0.${i % 250}`,
          nativeKey: "dns.A",
          nativeValue: `["10.0.0.${i % 250}"]`,
        },
        {
          key: "profile.OWNER.fullname",
          value: "Ünïcode 🚀",
          nativeKey: "profile.OWNER.fullname",
          nativeValue: "Ünïcode 🚀",
        },
      ]);
      if (i < 3)
        await source.domainMap.setReverse({
          network: "POLYGON",
          provider: i % 2 ? "NAMESPACE_A" : "NAMESPACE_B",
          address: ALICE,
          domainId: id,
        });
    }
    await source.crawlerLog.appendJournal([
      {
        sourceId: "src",
        chainId: 137,
        blockNumber: 1,
        blockHash: "0x1",
        logIndex: 0,
        txHash: "0xt",
        contract: "0xc",
        tokenId: "0x01",
        event: "{}",
        blockTime: 1_700_000_000,
      },
    ]);
    await source.crawlerLog.setCheckpoint({
      sourceId: "src",
      chainId: 137,
      blockNumber: 9,
      blockHash: "0x9",
      updatedAt: 1,
      state: "syncing",
      error: null,
    });
  });

  afterAll(async () => {
    await source.close();
    await pg.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("round-trips the whole map from SQLite to PostgreSQL and back to SQLite unchanged", async () => {
    const file = join(dir, "snap.jsonl");
    const exported = await exportSnapshot(source, file);
    expect(exported).toEqual({ domains: 1234, records: 2468, reverse: 2, journal: 1, checkpoints: 1 });

    const target = await createStore({ databaseUrl: pg.url, dataDir: dir });
    expect(await importSnapshot(target, file)).toEqual(exported);
    expect(await dump(target)).toEqual(await dump(source));
    // Importing twice changes nothing: upserts by token id, journal positions are unique.
    await importSnapshot(target, file);
    expect(await target.domainMap.countDomains()).toBe(1234);

    const file2 = join(dir, "snap2.jsonl");
    await exportSnapshot(target, file2);
    const again = await createStore({ dataDir: join(dir, "c") });
    await importSnapshot(again, file2);
    expect(await dump(again)).toEqual(await dump(source));
    await target.close();
    await again.close();
  });

  it("without the journal, exports no checkpoints so a new node re-crawls instead of resuming blind", async () => {
    const file = join(dir, "nojournal.jsonl");
    expect(await exportSnapshot(source, file, { journal: false })).toMatchObject({
      journal: 0,
      checkpoints: 0,
    });
  });

  it.each([
    ["an empty file", "", /empty file/],
    ["a file that is not a snapshot", '{"type":"header","format":"other"}\n', /not an omniname snapshot/],
    [
      "a future version",
      '{"type":"header","format":"omniname-snapshot","version":99}\n',
      /unsupported version/,
    ],
    [
      "a line that is not JSON",
      '{"type":"header","format":"omniname-snapshot","version":1}\n{nope\n',
      /line 2: not JSON/,
    ],
    [
      "an unknown provider",
      '{"type":"header","format":"omniname-snapshot","version":1}\n{"type":"domain","provider":"X","network":"BSC"}\n',
      /line 2: unknown provider/,
    ],
    [
      "an unknown line type",
      '{"type":"header","format":"omniname-snapshot","version":1}\n{"type":"what"}\n',
      /unknown line type/,
    ],
  ])("refuses %s with the line number", async (_label, content, message) => {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, content);
    const store = await createStore({ dataDir: join(dir, "bad") });
    await expect(importSnapshot(store, file)).rejects.toThrow(message);
    expect(await store.domainMap.countDomains()).toBe(0);
    await store.close();
  });
});

/** The file's lines with the header's `exportedAt` blanked: what must be equal byte for byte. */
function body(file: string): string {
  return readFileSync(file, "utf8").replace(/"exportedAt":"[^"]*"/, '"exportedAt":""');
}

const HEADER = '{"type":"header","format":"omniname-snapshot","version":1,"domains":1,"journal":false}';

/** A domain line whose records and reverse addresses come in no order, with bytes COPY escapes. */
function awkwardLine(n: number): string {
  return JSON.stringify({
    type: "domain",
    provider: "NAMESPACE_C",
    network: "ETHEREUM",
    tokenId: tokenIdOf(900_000 + n),
    name: `awkward${n}.eth`,
    sld: `awkward${n}`,
    tld: "eth",
    owner: ALICE,
    contractAddress: "0xc0",
    resolver: "0xres",
    registeredAt: null,
    registeredBlock: null,
    expiresAt: 5,
    lastUpdateBlock: 1,
    lastUpdateAt: 2,
    baseScore: 0,
    spam: true,
    csamOk: false,
    kyc: true,
    tags: ["spam:test", "a\tb"],
    records: [
      { key: "z.last", value: "tab\there\nnew line\\ back\\slash \r", nativeKey: "z", nativeValue: "\\N" },
      { key: "a.first", value: "Ünïcode 🚀", nativeKey: "a", nativeValue: "nul\u0000byte" },
      { key: "M.upper", value: "", nativeKey: "", nativeValue: "" },
    ],
    reverse: [{ address: `0x${"f".repeat(39)}${n}` }, { address: `0x${"0".repeat(39)}${n}` }],
  });
}

describe.each(STORE_BACKENDS)("snapshot import and export: $name", (backend) => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-snap-bulk-"));
  const world = join(dir, "world.jsonl");
  const cleanups: Array<() => Promise<void>> = [];
  const open = async () => {
    const opened = await backend.open();
    cleanups.push(opened.cleanup);
    return opened.store;
  };

  beforeAll(async () => {
    // 2,500 domains, imported in batches of 1,000 below: the bad lines after line 2,000 come after
    // two batches were written.
    await writeSyntheticSnapshot(world, 2500, { seed: 7 });
  });

  afterAll(async () => {
    for (const c of cleanups) await c();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exports what it imported byte for byte, the header's time aside", async () => {
    const store = await open();
    expect(await importSnapshot(store, world, { batchSize: 1000 })).toEqual({
      domains: 2500,
      records: 15_000,
      reverse: 500,
      journal: 0,
      checkpoints: 0,
    });
    const out = join(dir, "world-out.jsonl");
    await exportSnapshot(store, out, { journal: false });
    expect(body(out)).toBe(body(world));
    // Reverse records survive: the owner of the first domain names it.
    const [first] = await store.domainMap.findReverse("0x0000000000000000000000000000000000000001", {});
    expect(first).toMatchObject({ network: "POLYGON", provider: "NAMESPACE_A" });
    expect((await store.domainMap.findDomainById(first.domainId))?.name).toBe("name0.wallet");
  });

  it("sorts records and reverse addresses, so a second round trip is identical", async () => {
    const input = join(dir, "awkward.jsonl");
    writeFileSync(input, `${HEADER}\n${awkwardLine(1)}\n${awkwardLine(2)}\n`);
    const a = await open();
    await importSnapshot(a, input);
    const first = join(dir, "awkward-1.jsonl");
    await exportSnapshot(a, first);
    const line = JSON.parse(readFileSync(first, "utf8").split("\n")[1]);
    expect(line.records.map((r: { key: string }) => r.key)).toEqual(["M.upper", "a.first", "z.last"]);
    expect(line.records[2].value).toBe("tab\there\nnew line\\ back\\slash \r");
    expect(line.records[1].nativeValue).toBe("nul\ufffdbyte");
    expect(line.reverse).toEqual([{ address: `0x${"0".repeat(39)}1` }, { address: `0x${"f".repeat(39)}1` }]);
    const b = await open();
    await importSnapshot(b, first);
    const second = join(dir, "awkward-2.jsonl");
    await exportSnapshot(b, second);
    expect(body(second)).toBe(body(first));
  });

  it("re-imports idempotently: domains upserted, records replaced, not duplicated", async () => {
    const store = await open();
    await importSnapshot(store, world, { batchSize: 1000 });
    const before = join(dir, "idem-1.jsonl");
    await exportSnapshot(store, before);
    await importSnapshot(store, world, { batchSize: 700 });
    expect(await store.domainMap.countDomains()).toBe(2500);
    const found = await store.domainMap.findDomainByToken("POLYGON", "NAMESPACE_A", tokenIdOf(1));
    expect(found && (await store.domainMap.findRecords(found.id))).toHaveLength(6);
    const after = join(dir, "idem-2.jsonl");
    await exportSnapshot(store, after);
    expect(body(after)).toBe(body(before));
  });

  describe("on a store holding one domain", () => {
    let store: Store;
    beforeAll(async () => {
      store = await open();
      const seed = join(dir, "seed.jsonl");
      writeFileSync(seed, `${HEADER}\n${awkwardLine(9)}\n`);
      await importSnapshot(store, seed);
    });
    const unchanged = async () => {
      expect(await store.domainMap.countDomains()).toBe(1);
      const kept = await store.domainMap.findDomainByToken("ETHEREUM", "NAMESPACE_C", tokenIdOf(900_009));
      expect(kept && (await store.domainMap.findRecords(kept.id))).toHaveLength(3);
    };

    it.each([
      ["not JSON", "{nope", /line 2503: not JSON/],
      ["an unknown type", '{"type":"zone"}', /line 2503: unknown line type "zone"/],
      [
        "a missing field",
        awkwardLine(3).replace(/"owner":"[^"]*",/, ""),
        /line 2503: owner must be a string/,
      ],
      [
        "a field of the wrong type",
        awkwardLine(3).replace('"baseScore":0', '"baseScore":"0"'),
        /line 2503: baseScore must be an integer/,
      ],
      ["a JSON array", "[1,2]", /line 2503: not a JSON object/],
      ["a JSON number", "42", /line 2503: not a JSON object/],
      [
        "a bad record",
        awkwardLine(3).replace('"key":"z.last"', '"key":7'),
        /line 2503: key must be a string/,
      ],
    ])(
      "stops at a line that is %s, with its number, after two batches, and changes nothing",
      async (_l, bad, message) => {
        const file = join(dir, "bad-late.jsonl");
        // Header, 2,500 domains, the awkward line (2502), then the bad one (2503) and one more.
        writeFileSync(file, readFileSync(world));
        appendFileSync(file, `${awkwardLine(1)}\n${bad}\n${awkwardLine(2)}\n`);
        await expect(importSnapshot(store, file, { batchSize: 1000 })).rejects.toThrow(message);
        await unchanged();
      },
    );

    it.each([
      [
        "a 10 MB single line",
        () => `${HEADER}\n{"type":"domain","name":"${"x".repeat(10_000_000)}"}\n`,
        /line 2: longer than/,
      ],
      ["a 10 MB header without a line break", () => "x".repeat(10_000_000), /line 1: longer than/],
      ["an empty file", () => "", /empty file/],
      ["a header that announces domains and nothing else", () => `${HEADER}\n`, /no domain line.*truncated/],
      ["a header that is an array", () => "[]\n", /line 1: not a JSON object/],
      ["bytes that are not UTF-8", () => Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), /line 1: not UTF-8/],
    ])("refuses %s with a clear error", async (_l, content, message) => {
      const file = join(dir, "hostile.jsonl");
      writeFileSync(file, content());
      await expect(importSnapshot(store, file)).rejects.toThrow(message);
      await unchanged();
    });

    it("imports a snapshot of an empty map (a header only) as nothing", async () => {
      const file = join(dir, "empty-map.jsonl");
      writeFileSync(file, `${HEADER.replace('"domains":1', '"domains":0')}\n`);
      expect(await importSnapshot(store, file)).toEqual({
        domains: 0,
        records: 0,
        reverse: 0,
        journal: 0,
        checkpoints: 0,
      });
      await unchanged();
    });

    it("still takes an import after the failed ones (their transactions are over)", async () => {
      await importSnapshot(store, world, { batchSize: 1000 });
      expect(await store.domainMap.countDomains()).toBe(2501);
    });
  });
});

/** The schema objects the bulk load drops and creates again: indexes, keys, triggers. */
async function catalog(store: Store, backend: string): Promise<string[]> {
  const db = rawDb(store);
  const lines = async (query: ReturnType<typeof sql<{ a: string; b: string }>>) =>
    (await query.execute(db)).rows.map((r) => `${r.a}: ${r.b}`);
  if (backend === "sqlite")
    return lines(sql`select type || ' ' || name as a, coalesce(sql, '') as b from sqlite_master
      where type in ('index', 'trigger', 'table') order by name`);
  return [
    ...(await lines(sql`select indexname as a, indexdef as b from pg_indexes
      where schemaname = current_schema() order by indexname`)),
    ...(await lines(sql`select tgname as a, pg_get_triggerdef(oid) as b from pg_trigger
      where not tgisinternal order by tgname`)),
    ...(await lines(sql`select conname as a, pg_get_constraintdef(oid) as b from pg_constraint
      where connamespace = current_schema()::regnamespace order by conname`)),
    // Foreign keys are checked by internal triggers: as many as before.
    ...(await lines(sql`select 'internal triggers' as a, count(*)::text as b from pg_trigger where tgisinternal
      and tgrelid in ('domains'::regclass, 'records'::regclass, 'reverse_records'::regclass)`)),
  ];
}

/** The derived tables next to the group-bys the triggers keep them equal to. */
async function derived(store: Store) {
  const db = rawDb(store);
  const rows = async (query: ReturnType<typeof sql<Record<string, unknown>>>) =>
    (await query.execute(db)).rows.map((r) => Object.values(r).map(String).join("|")).sort();
  return {
    nameHolders: await rows(sql`select name, holders from name_holders`),
    nameHoldersExpected: await rows(sql`select name, count(*) from domains group by name`),
    tlds: await rows(sql`select tld, provider, network, domains, first_registered_at from tld_registrations`),
    tldsExpected: await rows(sql`select tld, provider, network, count(*), min(registered_at) from domains
      group by tld, provider, network`),
  };
}

async function idsAndTokens(store: Store): Promise<Array<[number, string]>> {
  const { rows } = await sql<{
    id: number | string;
    token_id: string;
  }>`select id, token_id from domains order by id`.execute(rawDb(store));
  return rows.map((r) => [Number(r.id), r.token_id]);
}

describe.each(STORE_BACKENDS)("snapshot import into an empty store (bulk load): $name", (backend) => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-snap-empty-"));
  const world = join(dir, "world.jsonl");
  const cleanups: Array<() => Promise<void>> = [];
  const open = async () => {
    const opened = await backend.open();
    cleanups.push(opened.cleanup);
    return opened.store;
  };

  beforeAll(async () => {
    await writeSyntheticSnapshot(world, 2500, { seed: 11 });
  });

  afterAll(async () => {
    for (const c of cleanups) await c();
    rmSync(dir, { recursive: true, force: true });
  });

  it("assigns dense ids in file order, fills the derived tables as the triggers would, keeps the schema", async () => {
    const store = await open();
    const schema = await catalog(store, backend.name);
    await importSnapshot(store, world, { batchSize: 1000 });
    expect(await idsAndTokens(store)).toEqual(
      Array.from({ length: 2500 }, (_, i) => [i + 1, tokenIdOf(i + 1)]),
    );
    const d = await derived(store);
    expect(d.nameHolders).toEqual(d.nameHoldersExpected);
    expect(d.nameHolders.length).toBeGreaterThan(2000);
    expect(d.tlds).toEqual(d.tldsExpected);
    expect(await catalog(store, backend.name)).toEqual(schema);

    // A later write (the crawler's) fires the triggers again, and takes the next id.
    const next = await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(9_999_999), name: "name1.crypto", sld: "name1", tld: "newtld" }),
    );
    expect(next).toBe(2501);
    await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(9_999_998), name: "fresh.newtld", tld: "newtld" }),
    );
    const after = await derived(store);
    expect(after.nameHolders).toEqual(after.nameHoldersExpected);
    expect(after.nameHolders).toContain("name1.crypto|2");
    expect(after.nameHolders).toContain("fresh.newtld|1");
    expect(after.tlds).toEqual(after.tldsExpected);
    expect(after.tlds.some((t) => t.startsWith("newtld|"))).toBe(true);
  });

  it("stops at a bad line after several batches and leaves the store empty, its indexes and triggers in place", async () => {
    const store = await open();
    const schema = await catalog(store, backend.name);
    const file = join(dir, "bad-late.jsonl");
    writeFileSync(file, readFileSync(world));
    appendFileSync(file, "{nope\n");
    await expect(importSnapshot(store, file, { batchSize: 1000 })).rejects.toThrow(/line 2502: not JSON/);
    expect(await store.domainMap.countDomains()).toBe(0);
    expect(await catalog(store, backend.name)).toEqual(schema);
    const d = await derived(store);
    expect([d.nameHolders, d.tlds]).toEqual([[], []]);
    // The triggers still fire, and the store takes a full import afterwards.
    await store.domainMap.upsertDomain(testDomain());
    expect((await derived(store)).nameHolders).toEqual(["alice.wallet|1"]);
    await store.clearChainIndex();
    await importSnapshot(store, world, { batchSize: 1000 });
    expect(await store.domainMap.countDomains()).toBe(2500);
  });

  it("imports a header alone as nothing, and the store still takes writes and imports", async () => {
    const store = await open();
    const schema = await catalog(store, backend.name);
    const file = join(dir, "header-only.jsonl");
    writeFileSync(file, `${HEADER.replace('"domains":1', '"domains":0')}\n`);
    expect(await importSnapshot(store, file)).toMatchObject({ domains: 0 });
    expect(await catalog(store, backend.name)).toEqual(schema);
    expect(await store.domainMap.upsertDomain(testDomain())).toBe(1);
  });

  it("folds a token seen again in a later batch into its first line, as the upserting path does", async () => {
    const lines = readFileSync(world, "utf8").split("\n");
    const edit = (line: string, over: Record<string, unknown>) =>
      JSON.stringify({ ...JSON.parse(line), ...over });
    const claimed = JSON.parse(lines[1]).reverse[0].address as string;
    const file = join(dir, "duplicates.jsonl");
    writeFileSync(
      file,
      [
        ...lines.slice(0, 1501),
        // Domain 10 again in the second batch: renamed, other records, claiming domain 0's address.
        edit(lines[11], {
          name: "again10.eth",
          sld: "again10",
          tld: "eth",
          registeredAt: 5,
          records: [{ key: "a.b", value: "v", nativeKey: "a.b", nativeValue: "v" }],
          reverse: [{ address: claimed }],
        }),
        // Domain 20 twice more (in one batch, and then in a third): the last line wins.
        edit(lines[21], { name: "twice20.x" }),
        ...lines.slice(1501, 2000),
        edit(lines[21], { name: "thrice20.x", records: [] }),
        ...lines.slice(2000),
      ].join("\n"),
    );
    // The upserting path, into a store holding one other domain.
    const upserted = await open();
    const seed = join(dir, "seed.jsonl");
    writeFileSync(seed, `${HEADER}\n${awkwardLine(9)}\n`);
    await importSnapshot(upserted, seed);
    await importSnapshot(upserted, file, { batchSize: 1000 });
    const bulk = await open();
    expect(await importSnapshot(bulk, file, { batchSize: 1000 })).toMatchObject({ domains: 2503 });
    expect(await bulk.domainMap.countDomains()).toBe(2500);

    const exported = async (store: Store, name: string) => {
      const out = join(dir, name);
      await exportSnapshot(store, out, { journal: false });
      return readFileSync(out, "utf8")
        .split("\n")
        .slice(1)
        .filter((l) => !l.includes(tokenIdOf(900_009)));
    };
    const lines2 = await exported(bulk, "dup-bulk.jsonl");
    expect(lines2).toEqual(await exported(upserted, "dup-upserted.jsonl"));
    // Reverse records are upserted, never removed by a later line: domain 10 keeps its own too.
    expect(JSON.parse(lines2[10])).toMatchObject({
      name: "again10.eth",
      records: [{ key: "a.b" }],
      reverse: expect.arrayContaining([{ address: claimed }]),
    });
    expect(JSON.parse(lines2[20])).toMatchObject({ name: "thrice20.x", records: [] });
    const ids = await idsAndTokens(bulk);
    expect(ids.slice(0, 1500)).toEqual(Array.from({ length: 1500 }, (_, i) => [i + 1, tokenIdOf(i + 1)]));
    const d = await derived(bulk);
    expect(d.nameHolders).toEqual(d.nameHoldersExpected);
    expect(d.tlds).toEqual(d.tldsExpected);
    expect(await catalog(bulk, backend.name)).toEqual(await catalog(upserted, backend.name));
  });
});
