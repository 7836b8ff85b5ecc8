import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/domain/errors.js";
import { exportSnapshot, importSnapshot } from "../../src/store/snapshot.js";
import { packSqlite, sqliteColumns, unpackSqlite } from "../../src/store/snapshot-encode.js";
import { parseInWorker } from "../../src/store/snapshot-parse-pool.js";
import type { SnapshotDomain } from "../../src/store/snapshot-sink.port.js";
import type { Store } from "../../src/store/store.js";
import { ALICE, BOB, STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

/*
 * The import's parse worker (snapshot-parse-worker.ts) against the in-thread path it replaces:
 * the same store from the same file, the same errors. Values chosen to stress the encodings: the
 * packed SQLite string (NUL-separated, so a NUL in a raw column sends the batch as columns) and
 * COPY text (tabs, newlines, backslashes, \N).
 */

const header = (domains: number) =>
  JSON.stringify({ type: "header", format: "omniname-snapshot", version: 1, domains, journal: true });

function line(n: number, over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: "domain",
    ...testDomain({ tokenId: tokenIdOf(n), name: `n${n}.wallet`, sld: `n${n}` }),
    records: [
      { key: "crypto.ETH.address", value: ALICE, nativeKey: "crypto.ETH.address", nativeValue: ALICE },
      { key: "text\tkey", value: "a\nb\\c\rd \\N", nativeKey: "x\\N", nativeValue: "Ünïcode 🚀" },
    ],
    reverse: [],
    ...over,
  });
}

/** A valid file whose values are as awkward as the checks allow. */
function awkwardFile(): string {
  const body = [
    line(1, { resolver: "", expiresAt: -5, registeredAt: null, registeredBlock: null }),
    line(2, { resolver: "=starts-with-equals", owner: `0x\u0000nul`, reverse: [{ address: BOB }] }),
    line(3, { reverse: [{ address: `nul\u0000addr` }, { address: ALICE }], tags: ["t\u0000", "spam:x"] }),
    line(4, { name: "tab\tname.wallet", sld: "nul\u0000sld", lastUpdateBlock: Number.MAX_SAFE_INTEGER }),
    // The same token again in the same batch and in a later one; an address claimed twice.
    line(1, { name: "renamed.wallet", records: [] }),
    line(5, { reverse: [{ address: BOB }], spam: true, kyc: true, csamOk: false }),
    line(6, { records: [], reverse: [] }),
    line(2, { owner: BOB }),
    JSON.stringify({
      type: "journal",
      sourceId: "src",
      chainId: 137,
      blockNumber: 1,
      blockHash: "0x1",
      logIndex: 0,
      txHash: "0xt",
      contract: "0xc",
      tokenId: null,
      event: "{}",
      blockTime: null,
    }),
    JSON.stringify({
      type: "checkpoint",
      sourceId: "src",
      chainId: 137,
      blockNumber: 9,
      blockHash: "0x9",
      updatedAt: 1,
      state: "syncing",
      error: "e\tf",
    }),
  ];
  return `${header(8)}\n${body.join("\n")}\n`;
}

const dir = mkdtempSync(join(tmpdir(), "omniname-snap-worker-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("snapshot encodings", () => {
  const batch: SnapshotDomain[] = [
    {
      domain: testDomain({ resolver: "", expiresAt: -1, registeredAt: null, tags: ["a"] }),
      records: [{ key: "k", value: "", nativeKey: "=", nativeValue: "tab\tnew\nline" }],
      reverse: [ALICE, BOB],
    },
    { domain: testDomain({ resolver: "=x", tokenId: tokenIdOf(2) }), records: [], reverse: [] },
    { domain: testDomain({ resolver: null, tokenId: tokenIdOf(3), spam: true }), records: [], reverse: [""] },
  ];

  it("packs SQLite's values into one string and back unchanged (nulls, empty strings, '=' prefixes)", () => {
    const columns = sqliteColumns(batch);
    const packed = packSqlite(columns);
    expect(packed).not.toBeNull();
    expect(unpackSqlite(packed as string, batch.length)).toEqual(columns);
  });

  it("refuses to pack a batch with a NUL in a raw column or a reverse address (sent as columns)", () => {
    expect(
      packSqlite(sqliteColumns([{ ...batch[0], domain: { ...batch[0].domain, owner: "a\u0000b" } }])),
    ).toBeNull();
    expect(packSqlite(sqliteColumns([{ ...batch[1], reverse: ["\u0000"] }]))).toBeNull();
    // A NUL in a name or a record is stored as U+FFFD (safeText): it packs.
    const safe = sqliteColumns([{ ...batch[1], domain: { ...batch[1].domain, name: "a\u0000" } }]);
    expect(unpackSqlite(packSqlite(safe) as string, 1)).toEqual(safe);
  });
});

describe("the parse worker", () => {
  it("stops when the reader leaves early, and reports a bad line as the in-thread check does", async () => {
    const file = join(dir, "early.jsonl");
    writeFileSync(file, `${header(3)}\n${line(1)}\n${line(2)}\n${line(3)}\n`);
    const job = {
      file,
      afterLine: 1,
      batchSize: 1,
      journalBatch: 10,
      encoding: { store: "sqlite" } as const,
      ahead: 1,
    };
    const seen: string[] = [];
    for await (const m of parseInWorker(job)) {
      seen.push(m.kind);
      break;
    }
    expect(seen).toEqual(["domains"]);

    writeFileSync(file, `${header(3)}\n${line(1)}\n\n${line(2, { baseScore: 1.5 })}\n`);
    const error = await (async () => {
      try {
        for await (const _ of parseInWorker(job));
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("BAD_REQUEST");
    expect((error as AppError).message).toBe("snapshot line 4: baseScore must be an integer");
  });

  it("fails with the worker's error, not a hang, when the file cannot be read", async () => {
    const run = async () => {
      for await (const _ of parseInWorker({
        file: join(dir, "absent.jsonl"),
        afterLine: 1,
        batchSize: 10,
        journalBatch: 10,
        encoding: { store: "postgres", bulkNext: null },
        ahead: 2,
      }));
    };
    await expect(run()).rejects.toThrow(/ENOENT/);
  });
});

describe.each(STORE_BACKENDS)("snapshot import on a worker thread = in this thread: $name", (backend) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });
  const open = async (seeded: boolean): Promise<Store> => {
    const opened = await backend.open();
    cleanups.push(opened.cleanup);
    if (seeded) {
      // A map that is not empty: the import upserts (and replaces this token's records).
      const id = await opened.store.domainMap.upsertDomain(
        testDomain({ tokenId: tokenIdOf(2), name: "old.wallet" }),
      );
      await opened.store.domainMap.replaceRecords(id, [
        { key: "old", value: "v", nativeKey: "old", nativeValue: "v" },
      ]);
      await opened.store.domainMap.upsertDomain(testDomain({ tokenId: tokenIdOf(99), name: "kept.wallet" }));
    }
    return opened.store;
  };
  const exported = async (store: Store, name: string) => {
    const out = join(dir, `${backend.name}-${name}.jsonl`);
    await exportSnapshot(store, out);
    return readFileSync(out, "utf8").split("\n").slice(1);
  };

  for (const seeded of [false, true])
    it(`imports the same map ${seeded ? "into a map that is not empty (upserts)" : "into an empty map (bulk load)"}`, async () => {
      const file = join(dir, `awkward-${backend.name}-${seeded}.jsonl`);
      writeFileSync(file, awkwardFile());
      const inWorker = await open(seeded);
      const inThread = await open(seeded);
      const counts = await importSnapshot(inWorker, file, { batchSize: 3 });
      expect(await importSnapshot(inThread, file, { batchSize: 3, worker: false })).toEqual(counts);
      expect(counts).toEqual({ domains: 8, records: 12, reverse: 4, journal: 1, checkpoints: 1 });
      const a = await exported(inWorker, `w-${seeded}`);
      expect(a).toEqual(await exported(inThread, `t-${seeded}`));
      const text = a.join("\n");
      expect(text).toContain("renamed.wallet");
      expect(text).toContain("a\\nb\\\\c\\rd \\\\N");
      expect(await inWorker.domainMap.countDomains()).toBe(seeded ? 7 : 6);
    });

  it("bulk-loads in the sink's messages (rows and COPYs running across them) the map the in-thread import makes", async () => {
    // More domains than a message (100) and than a multi-row statement, record counts that do not
    // divide them, a token seen again in a later message and an address claimed again.
    const body: string[] = [];
    for (let n = 1; n <= 347; n++) {
      const records = Array.from({ length: n % 4 }, (_, k) => ({
        key: `k${k}`,
        value: `v${n}.${k}`,
        nativeKey: `nk${k}`,
        nativeValue: `nv\t${n}`,
      }));
      const reverse = n % 7 === 0 ? [{ address: `0xaddr${n % 3}` }] : [];
      body.push(line(n, { records, reverse }));
    }
    body.push(line(42, { name: "again.wallet", records: [] }), line(250, { owner: BOB }));
    const file = join(dir, `messages-${backend.name}.jsonl`);
    writeFileSync(file, `${header(body.length)}\n${body.join("\n")}\n`);
    const inWorker = await open(false);
    const inThread = await open(false);
    const counts = await importSnapshot(inWorker, file);
    expect(await importSnapshot(inThread, file, { worker: false })).toEqual(counts);
    expect(counts.domains).toBe(349);
    expect(await inWorker.domainMap.countDomains()).toBe(347);
    const a = await exported(inWorker, "messages-w");
    expect(a).toEqual(await exported(inThread, "messages-t"));
    expect(a.join("\n")).toContain("again.wallet");
  });

  it("stops at the same line with the same error either way, and changes nothing", async () => {
    const store = await open(true);
    const before = await exported(store, "before");
    const cases: Array<[string, string, number | undefined]> = [
      [
        `${header(2)}\n${line(1)}\n${line(2, { network: "MARS" })}\n`,
        "snapshot line 3: unknown network",
        undefined,
      ],
      [
        `${header(2)}\n${line(1)}\n${line(2)}\n${line(3, { name: "x".repeat(3000) })}`,
        "snapshot line 4: longer than 2000 bytes",
        2000,
      ],
    ];
    const bytes = Buffer.concat([Buffer.from(`${header(1)}\n${line(1)}\n`), Buffer.from([0xff, 0x0a])]);
    for (const [i, [text, message, maxLineBytes]] of cases.entries()) {
      const file = join(dir, `bad-${backend.name}-${i}.jsonl`);
      writeFileSync(file, text);
      for (const worker of [true, false])
        await expect(importSnapshot(store, file, { batchSize: 1, worker, maxLineBytes })).rejects.toThrow(
          message,
        );
    }
    const file = join(dir, `bad-utf8-${backend.name}.jsonl`);
    writeFileSync(file, bytes);
    for (const worker of [true, false])
      await expect(importSnapshot(store, file, { batchSize: 1, worker })).rejects.toThrow(
        "snapshot line 3: not UTF-8",
      );
    expect(await exported(store, "after")).toEqual(before);
  });
});
