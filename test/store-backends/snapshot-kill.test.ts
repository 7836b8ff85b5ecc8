import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSyntheticSnapshot } from "../../bench/support/synthetic-snapshot.js";
import { createStore } from "../../src/store/create-store.js";
import { importSnapshot } from "../../src/store/snapshot.js";

/*
 * The SQLite import into an empty map runs on a rollback journal instead of the WAL
 * (sqlite-snapshot-import.ts): every row is written once, to the database, and the WAL never
 * holds the map. All or nothing still: an import killed with SIGKILL after it has written rows
 * into the database file leaves a hot journal, and the next open finds the empty map, intact.
 */

const CHILD = join(import.meta.dirname, "snapshot-import-child.ts");
const DOMAINS = 30_000;

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/** The store's file, checked: integrity, journal mode, the map's size, its indexes and triggers. */
function inspect(file: string) {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const names = (type: string) =>
      (
        db
          .prepare("select name from sqlite_master where type = ? and tbl_name = 'domains' order by name")
          .pluck()
          .all(type) as string[]
      ).join(",");
    return {
      integrity: db.pragma("integrity_check", { simple: true }),
      journalMode: db.pragma("journal_mode", { simple: true }),
      domains: db.prepare("select count(*) from domains").pluck().get(),
      records: db.prepare("select count(*) from records").pluck().get(),
      indexes: names("index"),
      triggers: names("trigger"),
    };
  } finally {
    db.close();
  }
}

describe("SQLite bulk load on a rollback journal", () => {
  let dir: string;
  let snapshot: string;
  let emptyIndexes: string;
  let emptyTriggers: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-snapkill-"));
    snapshot = join(dir, "world.jsonl");
    await writeSyntheticSnapshot(snapshot, DOMAINS);
    const store = await createStore({ dataDir: join(dir, "ref") });
    await store.close();
    const ref = inspect(join(dir, "ref", "omniname.db"));
    emptyIndexes = ref.indexes;
    emptyTriggers = ref.triggers;
    expect(emptyIndexes).toContain("domains_name");
    expect(emptyTriggers).not.toBe("");
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("killed with SIGKILL mid-import, leaves the empty map, intact, in WAL mode; the next import loads it whole", async () => {
    const dataDir = join(dir, "killed");
    const file = join(dataDir, "omniname.db");
    (await createStore({ dataDir })).close();
    const emptyBytes = size(file);
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, snapshot], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    let killed = false;
    let maxWal = 0;
    // Killed once the import has written rows into the database file itself (past its empty
    // size by 8 MB), with its rollback journal beside it.
    while (!killed && child.exitCode === null) {
      maxWal = Math.max(maxWal, size(`${file}-wal`));
      if (existsSync(`${file}-journal`) && size(file) > emptyBytes + (8 << 20)) {
        child.kill("SIGKILL");
        killed = true;
      } else await new Promise((r) => setTimeout(r, 10));
    }
    await exited;
    expect(killed).toBe(true);
    expect(existsSync(`${file}-journal`)).toBe(true);
    expect(maxWal).toBeLessThan(1 << 20);

    // The next connection rolls the hot journal back; the store opens on the empty map.
    const store = await createStore({ dataDir });
    try {
      expect(inspect(file)).toMatchObject({
        integrity: "ok",
        journalMode: "wal",
        domains: 0,
        records: 0,
        indexes: emptyIndexes,
        triggers: emptyTriggers,
      });
      expect(await importSnapshot(store, snapshot)).toMatchObject({ domains: DOMAINS });
      // After the import: WAL again, its read connection reopened and serving.
      expect(inspect(file)).toMatchObject({
        integrity: "ok",
        journalMode: "wal",
        domains: DOMAINS,
        records: DOMAINS * 6,
        indexes: emptyIndexes,
        triggers: emptyTriggers,
      });
      expect(existsSync(`${file}-journal`)).toBe(false);
      expect((await store.domainMap.findDomainsByName(["name0.wallet"], {})).map((d) => d.name)).toContain(
        "name0.wallet",
      );
      expect(store.domainMap.readVersion()).not.toBeNull();
    } finally {
      await store.close();
    }
  });

  it("runs in WAL mode, whole, when another connection holds the file", async () => {
    const dataDir = join(dir, "shared");
    const store = await createStore({ dataDir });
    const other = new BetterSqlite3(join(dataDir, "omniname.db"), { readonly: true });
    try {
      other.prepare("select count(*) from domains").get();
      expect(await importSnapshot(store, snapshot)).toMatchObject({ domains: DOMAINS });
      expect(other.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(other.prepare("select count(*) from domains").pluck().get()).toBe(DOMAINS);
      expect((await store.domainMap.findDomainsByName(["name0.wallet"], {})).map((d) => d.name)).toContain(
        "name0.wallet",
      );
    } finally {
      other.close();
      await store.close();
    }
    expect(inspect(join(dataDir, "omniname.db"))).toMatchObject({
      integrity: "ok",
      journalMode: "wal",
      domains: DOMAINS,
      indexes: emptyIndexes,
      triggers: emptyTriggers,
    });
  });
});
