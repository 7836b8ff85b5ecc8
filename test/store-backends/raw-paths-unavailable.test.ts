import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/domain/errors.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/pg.js";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";

/**
 * The store's paths that use the driver's own handle rather than Kysely's (PostgreSQL's COPY of
 * the name scan and of the snapshot import, SQLite's name-scan worker and snapshot import) leave the store as every
 * other read does: a database that goes away is STORE_UNAVAILABLE (503 over HTTP, the CLI's
 * "STORE_UNAVAILABLE" line), never the driver's raw error. (The change channel's listener and the
 * source locks hold their own connection and absorb its loss: pg-change-channel.test.ts and
 * source-lease.test.ts terminate those.)
 */
const CHECKPOINT = {
  sourceId: "raw",
  chainId: 1,
  blockNumber: 1,
  blockHash: "0x1",
  updatedAt: 1,
  state: "live" as const,
  error: null,
};

async function expectUnavailable(p: Promise<unknown>): Promise<void> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AppError);
  expect((e as AppError).code).toBe("STORE_UNAVAILABLE");
  expect((e as AppError).retryable).toBe(true);
}

async function drain(pages: AsyncIterable<unknown[]>): Promise<number> {
  let n = 0;
  for await (const page of pages) n += page.length;
  return n;
}

describe("PostgreSQL: the raw pool's paths when the database drops the connection", () => {
  let store: Store;
  let admin: pg.Client;
  let drop: () => Promise<void>;
  let dbName: string;
  const terminate = () =>
    admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
      [dbName],
    );

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    dbName = new URL(db.url).pathname.slice(1);
    store = await createStore({ databaseUrl: db.url, dataDir: "/nonexistent" });
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // ~40 MB of COPY text: more than the sockets hold, so the server is still sending when the
    // test terminates it (the COPY stream pauses the connection while the caller holds a page).
    const big = "x".repeat(10_000);
    for (let i = 0; i < 200; i++) {
      const id = await store.domainMap.upsertDomain(
        testDomain({ tokenId: tokenIdOf(9000 + i), name: `big${i}.wallet`, sld: `big${i}`, tld: "wallet" }),
      );
      await store.domainMap.replaceRecords(
        id,
        Array.from({ length: 20 }, (_, k) => ({
          key: `text.k${k}`,
          value: big,
          nativeKey: `k${k}`,
          nativeValue: big,
        })),
      );
    }
  }, 120_000);
  afterAll(async () => {
    await admin?.end();
    await store?.close();
    await drop?.();
  });

  it("the name scan (COPY TO): STORE_UNAVAILABLE, then the next scan reads everything", async () => {
    const pages = store.domainMap.iterateDomainsByName(1)[Symbol.asyncIterator]();
    const first = await pages.next();
    expect(first.value).toHaveLength(1);
    await terminate();
    await expectUnavailable(drain({ [Symbol.asyncIterator]: () => pages }));
    expect(await drain(store.domainMap.iterateDomainsByName(50))).toBe(200);
  });

  it("the snapshot import (its own transaction on a pooled client): STORE_UNAVAILABLE, nothing half-written", async () => {
    await expectUnavailable(
      store.withSnapshotSink!(async (sink) => {
        await terminate();
        await sink.writeCheckpoints([CHECKPOINT]);
      }),
    );
    expect((await store.crawlerLog.listCheckpoints()).filter((c) => c.sourceId === "raw")).toEqual([]);
  });
});

describe("SQLite: the name-scan worker and the snapshot import when the file cannot be used", () => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-raw-"));
    store = await createStore({ dataDir: dir });
    await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(1), name: "a.wallet", sld: "a", tld: "wallet" }),
    );
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers STORE_UNAVAILABLE (the worker's SQLITE_CANTOPEN), then reads again once the file is back", async () => {
    const file = join(dir, "omniname.db");
    renameSync(file, `${file}.away`);
    try {
      await expectUnavailable(drain(store.domainMap.iterateDomainsByName(10, { readAhead: true })));
    } finally {
      renameSync(`${file}.away`, file);
    }
    expect(await drain(store.domainMap.iterateDomainsByName(10, { readAhead: true }))).toBe(1);
  });

  it("the snapshot import while another process holds the write lock past the busy timeout (5 s): STORE_UNAVAILABLE", async () => {
    const other = new BetterSqlite3(join(dir, "omniname.db"));
    other.exec("begin immediate");
    try {
      await expectUnavailable(
        store.withSnapshotSink!(async (sink) => {
          await sink.writeCheckpoints([CHECKPOINT]);
        }),
      );
    } finally {
      other.exec("rollback");
      other.close();
    }
    expect((await store.crawlerLog.listCheckpoints()).filter((c) => c.sourceId === "raw")).toEqual([]);
  }, 30_000);
});
