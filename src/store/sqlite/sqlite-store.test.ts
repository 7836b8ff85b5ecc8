import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ALICE, BOB, testDomain } from "../../../test/helpers/store-world.js";
import { FOREIGN_COMMIT_BOUND_MS, WalIndexProbe } from "./sqlite-commit-watch.js";
import { createSqliteStore, type SqliteStore } from "./sqlite-store.js";

const domain = testDomain;

let dir: string;
let file: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "omniname-sqlite-"));
  file = join(dir, "omniname.db");
  store = createSqliteStore(file);
  await store.migrate();
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A store whose cache ignores other processes for an hour: only this process's commit tracking can
 * empty it, so a test over it fails when that tracking misses a commit.
 */
async function ownCommitsOnly(): Promise<SqliteStore> {
  const s = createSqliteStore(file, { foreignCommitBoundMs: 3_600_000 });
  await s.migrate();
  return s;
}

/** Runs `sql` with better-sqlite3 in another Node process: a crawler writing the same file. */
function writeFromAnotherProcess(sql: string): void {
  const script = `const D = require("better-sqlite3"); const db = new D(${JSON.stringify(file)}); db.pragma("busy_timeout = 5000"); db.exec(${JSON.stringify(sql)}); db.close();`;
  execFileSync(process.execPath, ["-e", script], { cwd: process.cwd() });
}

describe("SqliteStore read cache", () => {
  it("hands out the same frozen candidates for a name and filter until a commit, then new ones", async () => {
    const own = await ownCommitsOnly();
    try {
      await own.domainMap.upsertDomain(domain());
      await own.domainMap.upsertDomain(
        domain({ provider: "NAMESPACE_B", network: "ETHEREUM", tokenId: `0x${"2".padStart(64, "0")}` }),
      );
      const all = await own.domainMap.findDomainsByName(["alice.wallet"], {});
      const eth = await own.domainMap.findDomainsByName(["alice.wallet"], { network: "ETHEREUM" });
      expect(all.map((d) => d.network)).toEqual(["POLYGON", "ETHEREUM"]);
      expect(eth.map((d) => d.network)).toEqual(["ETHEREUM"]);
      expect(await own.domainMap.findDomainsByName(["alice.wallet"], {})).toBe(all);
      expect(await own.domainMap.findDomainsByName(["alice.wallet"], { network: "ETHEREUM" })).toBe(eth);
      expect(eth[0]).toBe(all[1]);
      for (const x of [all, all[0], all[0].records, all[0].tags]) expect(Object.isFrozen(x)).toBe(true);

      await own.domainMap.updateDomainSignals(all[0].id, {
        baseScore: 90,
        spam: false,
        csamOk: true,
        kyc: false,
        tags: [],
      });
      const after = await own.domainMap.findDomainsByName(["alice.wallet"], {});
      expect(after).not.toBe(all);
      expect(after[0]).not.toBe(all[0]);
      expect(after[0].baseScore).toBe(90);
    } finally {
      await own.close();
    }
  });

  it("serves the state of another process's last commit, read after read", async () => {
    const id = await store.domainMap.upsertDomain(domain());
    for (let i = 0; i < 5; i++) {
      const owner = `0x${String(i + 1).padStart(40, "0")}`;
      writeFromAnotherProcess(`update domains set owner = '${owner}' where id = ${id}`);
      expect((await store.domainMap.findDomainsByName(["alice.wallet"], {}))[0].owner).toBe(owner);
    }
    writeFromAnotherProcess(`delete from records; delete from domains where id = ${id}`);
    expect(await store.domainMap.findDomainsByName(["alice.wallet"], {})).toEqual([]);
  });

  it("serves each commit of this process at once: another store on the file, raw writes, transactions", async () => {
    const own = await ownCommitsOnly();
    try {
      const id = await own.domainMap.upsertDomain(domain());
      const second = await ownCommitsOnly();
      try {
        const set = own.raw.prepare("update domains set owner = ? where id = ?");
        const addRecord = own.raw.transaction((i: number) => {
          own.raw
            .prepare(
              "insert into records (domain_id, key, value, native_key, native_value) values (?, ?, ?, ?, ?)",
            )
            .run(id, `record.TXT.${i}`, String(i), `record.TXT.${i}`, String(i));
        });
        let records = 0;
        for (let i = 0; i < 300; i++) {
          const owner = `0x${String(i + 1).padStart(40, "0")}`;
          if (i % 4 === 0) await second.domainMap.upsertDomain(domain({ owner }));
          else if (i % 4 === 1) set.run(owner, id);
          else if (i % 4 === 2) own.raw.exec(`update domains set owner = '${owner}' where id = ${id}`);
          else {
            addRecord(i);
            records++;
            await second.db.updateTable("domains").set({ owner }).where("id", "=", id).execute();
          }
          for (const s of [own, second]) {
            const [d] = await s.domainMap.findDomainsByName(["alice.wallet"], {});
            expect(d.owner).toBe(owner);
            expect(d.records.length).toBe(records);
          }
        }
      } finally {
        await second.close();
      }
    } finally {
      await own.close();
    }
  });

  it(`serves another connection's commit within ${FOREIGN_COMMIT_BOUND_MS} ms`, async () => {
    const id = await store.domainMap.upsertDomain(domain());
    const other = new BetterSqlite3(file);
    try {
      const set = other.prepare("update domains set owner = ? where id = ?");
      for (let i = 0; i < 50; i++) {
        const owner = i % 2 === 0 ? BOB : ALICE;
        set.run(owner, id);
        const committed = performance.now();
        while (performance.now() - committed <= FOREIGN_COMMIT_BOUND_MS) {
          // the bound: another process's commit may be answered from the cache for this long
        }
        expect((await store.domainMap.findDomainsByName(["alice.wallet"], {}))[0].owner).toBe(owner);
      }
    } finally {
      other.close();
    }
  });
});

describe("SqliteStore owner and reverse read cache", () => {
  it("hands out the same frozen owner domains and reverse records until a commit, then new ones", async () => {
    const own = await ownCommitsOnly();
    try {
      const a = await own.domainMap.upsertDomain(domain());
      await own.domainMap.upsertDomain(
        domain({ provider: "NAMESPACE_B", network: "ETHEREUM", tokenId: `0x${"2".padStart(64, "0")}` }),
      );
      await own.domainMap.setReverse({
        network: "POLYGON",
        provider: "NAMESPACE_A",
        address: ALICE,
        domainId: a,
      });
      const all = await own.domainMap.findDomainsByOwner(ALICE, {});
      const eth = await own.domainMap.findDomainsByOwner(ALICE, { network: "ETHEREUM" });
      const rev = await own.domainMap.findReverse(ALICE, {});
      expect(all.map((d) => d.network)).toEqual(["POLYGON", "ETHEREUM"]);
      expect(eth.map((d) => d.network)).toEqual(["ETHEREUM"]);
      expect(rev.map((r) => r.domainId)).toEqual([a]);
      expect(await own.domainMap.findReverse(ALICE, { network: "ETHEREUM" })).toEqual([]);
      expect(await own.domainMap.findDomainsByOwner(ALICE, {})).toBe(all);
      expect(await own.domainMap.findDomainsByOwner(ALICE, { network: "ETHEREUM" })).toBe(eth);
      expect(await own.domainMap.findReverse(ALICE, {})).toBe(rev);
      expect(eth[0]).toBe(all[1]);
      for (const x of [all, all[0], all[0].records, rev, rev[0]]) expect(Object.isFrozen(x)).toBe(true);

      // Each kind of change shows in the very next read: owner, records, reverse records, deletion.
      const changes: Array<[string, () => Promise<unknown>, () => Promise<void>]> = [
        [
          "owner moves to Bob",
          () => own.db.updateTable("domains").set({ owner: BOB }).where("id", "=", a).execute(),
          async () => {
            expect((await own.domainMap.findDomainsByOwner(ALICE, {})).map((d) => d.id)).not.toContain(a);
            expect((await own.domainMap.findDomainsByOwner(BOB, {})).map((d) => d.id)).toEqual([a]);
          },
        ],
        [
          "a record is added (raw writer)",
          async () =>
            own.raw
              .prepare(
                "insert into records (domain_id, key, value, native_key, native_value) values (?, 'record.TXT.0', 'x', 'record.TXT.0', 'x')",
              )
              .run(a),
          async () => expect((await own.domainMap.findDomainsByOwner(BOB, {}))[0].records.length).toBe(1),
        ],
        [
          "Bob sets a reverse record",
          () =>
            own.domainMap.setReverse({
              network: "POLYGON",
              provider: "NAMESPACE_A",
              address: BOB,
              domainId: a,
            }),
          async () => expect((await own.domainMap.findReverse(BOB, {})).map((r) => r.domainId)).toEqual([a]),
        ],
        [
          "Alice's reverse record goes",
          () => own.domainMap.removeReverse(ALICE, "POLYGON", "NAMESPACE_A"),
          async () => expect(await own.domainMap.findReverse(ALICE, {})).toEqual([]),
        ],
        [
          "the domain is deleted",
          () => own.domainMap.deleteDomain(a),
          async () => expect(await own.domainMap.findDomainsByOwner(BOB, {})).toEqual([]),
        ],
      ];
      for (const [what, write, check] of changes) {
        // warm every cached read, then change
        await own.domainMap.findDomainsByOwner(ALICE, {});
        await own.domainMap.findDomainsByOwner(BOB, {});
        await own.domainMap.findReverse(ALICE, {});
        await own.domainMap.findReverse(BOB, {});
        await write();
        await check().catch((e: Error) => {
          throw new Error(`${what}: ${e.message}`);
        });
      }
    } finally {
      await own.close();
    }
  });

  it("serves the owner state of another process's last commit, read after read", async () => {
    const id = await store.domainMap.upsertDomain(domain());
    for (let i = 0; i < 5; i++) {
      const owner = i % 2 === 0 ? BOB : ALICE;
      const other = owner === BOB ? ALICE : BOB;
      await store.domainMap.findDomainsByOwner(owner, {});
      await store.domainMap.findReverse(owner, {});
      writeFromAnotherProcess(
        `update domains set owner = '${owner}' where id = ${id}; insert or replace into reverse_records (network, provider, address, domain_id) values ('POLYGON', 'NAMESPACE_A', '${owner}', ${id})`,
      );
      expect((await store.domainMap.findDomainsByOwner(owner, {})).map((d) => d.id)).toEqual([id]);
      expect(await store.domainMap.findDomainsByOwner(other, {})).toEqual([]);
      expect((await store.domainMap.findReverse(owner, {})).map((r) => r.domainId)).toEqual([id]);
    }
  });
});

/** Waits out the bound within which another process's commit may still go unseen. */
function pastForeignBound(): void {
  const t = performance.now();
  while (performance.now() - t <= FOREIGN_COMMIT_BOUND_MS) {
    // busy wait: the bound is a millisecond
  }
}

describe("SqliteStore read cache and writes that leave it alone", () => {
  async function usageFlush(s: SqliteStore, projectId: number, n: number): Promise<void> {
    await s.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("usage_counters")
        .values({
          project_id: projectId,
          day: "2025-01-01",
          endpoint: "resolve",
          metric: "requests",
          count: n,
        })
        .onConflict((oc) => oc.columns(["project_id", "day", "endpoint", "metric"]).doUpdateSet({ count: n }))
        .execute();
    });
  }

  it("keeps the cache across commits that change only usage, keys and accounts", async () => {
    await store.domainMap.upsertDomain(domain());
    const project = await store.projects.createProject({ name: "p" });
    const cached = await store.domainMap.findDomainsByName(["alice.wallet"], {});
    await usageFlush(store, project.id, 1);
    await store.projects.touchApiKeys(new Map([[123, 1]]));
    await store.db.updateTable("projects").set({ description: "x" }).where("id", "=", project.id).execute();
    store.raw.prepare("update projects set plan = 'internal' where id = ?").run(project.id);
    pastForeignBound();
    expect(await store.domainMap.findDomainsByName(["alice.wallet"], {})).toBe(cached);
  });

  it("drops the cache when a transaction mixes usage rows with domain rows, by any path", async () => {
    const own = await ownCommitsOnly();
    try {
      const id = await own.domainMap.upsertDomain(domain());
      const project = await own.projects.createProject({ name: "p" });
      const cases: Array<(owner: string) => Promise<unknown>> = [
        // the crawler's path: bulk statements on the bare connection inside the transaction
        (owner) => own.transaction(async (tx) => tx.domainMap.upsertDomains([domain({ owner })])),
        (owner) =>
          own.db.transaction().execute(async (trx) => {
            await trx
              .insertInto("usage_counters")
              .values({ project_id: project.id, day: owner, endpoint: "e", metric: "m", count: 1 })
              .execute();
            await trx.updateTable("domains").set({ owner }).where("id", "=", id).execute();
          }),
        async (owner) => {
          await usageFlush(own, project.id, 2);
          own.raw.exec(`update domains set owner = '${owner}' where id = ${id}`);
        },
        // usage rows through Kysely, a domain row through the writer, in one transaction
        async (owner) =>
          own.db.transaction().execute(async (trx) => {
            await trx
              .insertInto("usage_counters")
              .values({ project_id: project.id, day: owner, endpoint: "f", metric: "m", count: 1 })
              .execute();
            own.raw.prepare("update domains set owner = ? where id = ?").run(owner, id);
          }),
      ];
      for (const [i, write] of cases.entries()) {
        const owner = `0x${String(i + 7).padStart(40, "0")}`;
        await own.domainMap.findDomainsByName(["alice.wallet"], {});
        await write(owner);
        expect((await own.domainMap.findDomainsByName(["alice.wallet"], {}))[0].owner, `case ${i}`).toBe(
          owner,
        );
      }
    } finally {
      await own.close();
    }
  });

  it("still sees another process's commit that lands next to a cache-free commit of its own", async () => {
    const id = await store.domainMap.upsertDomain(domain());
    const project = await store.projects.createProject({ name: "p" });
    const other = new BetterSqlite3(file);
    try {
      const set = other.prepare("update domains set owner = ? where id = ?");
      for (let i = 0; i < 40; i++) {
        const owner = i % 2 === 0 ? BOB : ALICE;
        await store.domainMap.findDomainsByName(["alice.wallet"], {});
        pastForeignBound();
        await store.domainMap.findDomainsByName(["alice.wallet"], {}); // the probe has just looked
        // another process commits, then this one commits usage (rows changed, or none at all)
        set.run(owner, id);
        if (i % 4 === 0) store.raw.prepare("update usage_counters set count = 0 where project_id = -1").run();
        else await usageFlush(store, project.id, i);
        pastForeignBound();
        expect((await store.domainMap.findDomainsByName(["alice.wallet"], {}))[0].owner, `round ${i}`).toBe(
          owner,
        );
      }
    } finally {
      other.close();
    }
  });
});

describe("WalIndexProbe", () => {
  it("reports a change after each commit of any connection and none without one", () => {
    const probe = WalIndexProbe.open(file, "wal");
    expect(probe).not.toBeNull();
    const other = new BetterSqlite3(file);
    try {
      expect(probe!.changed()).toBe(true); // the first call has nothing to compare with
      expect(probe!.changed()).toBe(false);
      other.prepare("select count(*) from domains").get();
      expect(probe!.changed()).toBe(false); // a read commits nothing
      other.exec(
        "insert into projects (name, description, plan, created_at, settings) values ('p', '', 'free', 0, '{}')",
      );
      expect(probe!.changed()).toBe(true);
      expect(probe!.changed()).toBe(false);
      store.raw.exec("update projects set description = 'x'");
      expect(probe!.changed()).toBe(true);
      other.exec("begin; update projects set description = 'y'; rollback");
      expect(probe!.changed()).toBe(false);
    } finally {
      other.close();
      probe!.close();
    }
  });

  it("declines a database that is not in WAL mode or has no WAL index, so the store falls back to data_version", () => {
    expect(WalIndexProbe.open(file, "delete")).toBeNull();
    expect(WalIndexProbe.open(join(dir, "missing.db"), "wal")).toBeNull();
  });
});
