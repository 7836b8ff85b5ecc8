import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DomainWrite } from "../../domain/types.js";
import { NAME_HOLDERS_FILL, TLD_REGISTRATIONS_FILL } from "../map-derived-ddl.js";
import { createSqliteStore, type SqliteStore } from "./sqlite-store.js";

/**
 * The crawler's bulk upsert keeps `name_holders` and `tld_registrations` itself with the row
 * triggers held off (migration 0021): after every write both tables equal a fill from scratch,
 * `version` moves exactly for the names whose count crossed between one holder and several, and
 * writes outside the bulk path (a delete, another connection) still go through the triggers.
 */
const token = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

function domain(n: number, name: string, tld: string, registeredAt: number | null): DomainWrite {
  return {
    provider: n % 3 === 0 ? "NAMESPACE_B" : "NAMESPACE_A",
    network: n % 5 === 0 ? "ETHEREUM" : "POLYGON",
    tokenId: token(n),
    name: `${name}.${tld}`,
    sld: name,
    tld,
    owner: "0x00000000000000000000000000000000000a11ce",
    contractAddress: "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
    resolver: null,
    registeredAt,
    registeredBlock: 10,
    expiresAt: null,
    lastUpdateBlock: 10,
    lastUpdateAt: 1_700_000_000_000,
    baseScore: 50,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
  };
}

/** A small deterministic generator: the same sequence every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("the crawler's upkeep of the derived tables on SQLite", () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-upkeep-"));
    store = createSqliteStore(join(dir, "s.db"));
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const holders = () =>
    new Map(
      (
        store.raw.prepare("select name, holders, version from name_holders").all() as Array<{
          name: string;
          holders: number;
          version: number;
        }>
      ).map((r) => [r.name, r]),
    );
  const rows = (sql: string) => store.raw.prepare(sql).all();
  const scratch = (fill: string, table: string, columns: string) => {
    const conn = store.raw;
    conn.exec("savepoint scratch");
    try {
      conn.exec(`create temp table scratch as select ${columns} from ${table} where 0`);
      conn.exec(fill.replace(`insert into ${table}`, "insert into temp.scratch"));
      return conn.prepare(`select ${columns} from temp.scratch order by ${columns}`).all();
    } finally {
      conn.exec("rollback to scratch");
      conn.exec("release scratch");
    }
  };
  const expectExact = () => {
    expect(rows("select name, holders from name_holders order by name, holders")).toEqual(
      scratch(NAME_HOLDERS_FILL, "name_holders", "name, holders"),
    );
    const cols = "tld, provider, network, domains, first_registered_at";
    expect(rows(`select ${cols} from tld_registrations order by ${cols}`)).toEqual(
      scratch(TLD_REGISTRATIONS_FILL, "tld_registrations", cols),
    );
  };

  it("equals a fill from scratch after random writes, renames and moves, with the version moves", async () => {
    const next = rng(7);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T;
    const labels = ["a", "b", "c", "d", "e", "f"];
    const tlds = ["wallet", "crypto", "x"];
    for (let round = 0; round < 40; round++) {
      const writes: DomainWrite[] = [];
      for (let i = 0; i < 1 + Math.floor(next() * 30); i++)
        writes.push(
          domain(
            Math.floor(next() * 40),
            pick(labels),
            pick(tlds),
            next() < 0.2 ? null : 1_000 + Math.floor(next() * 50),
          ),
        );
      const before = holders();
      await store.transaction(async (tx) => {
        await tx.domainMap.upsertDomains(writes);
        // A delete inside the same transaction goes through the row triggers.
        if (round % 4 === 3) {
          const [victim] = [
            ...(
              await tx.domainMap.findDomainIdsByTokens("POLYGON", "NAMESPACE_A", [token(1), token(2)])
            ).values(),
          ];
          if (victim !== undefined) await tx.domainMap.deleteDomain(victim);
        }
      });
      expectExact();
      if (round % 4 === 3) continue; // the delete's own moves are the triggers' (tested elsewhere)
      const after = holders();
      for (const name of new Set([...before.keys(), ...after.keys()])) {
        const b = before.get(name);
        const a = after.get(name);
        if (a === undefined) continue;
        const crossed = (b?.holders ?? 0) > 1 !== a.holders > 1 && (b !== undefined || a.holders > 1);
        expect({ name, moved: a.version !== (b?.version ?? 0) }).toEqual({ name, moved: crossed });
      }
    }
    expect(rows("select * from map_derived_deferred")).toEqual([]);
  });

  it("leaves the triggers on for writes outside the bulk path", async () => {
    await store.domainMap.upsertDomain(domain(1, "solo", "wallet", 5));
    await store.transaction(async (tx) => {
      await tx.domainMap.upsertDomains([domain(2, "solo", "wallet", 3), domain(4, "other", "crypto", null)]);
    });
    await store.domainMap.upsertDomain(domain(7, "solo", "wallet", 1));
    expectExact();
    expect(holders().get("solo.wallet")).toMatchObject({ holders: 3, version: 1 });
    // A failed bulk write rolls back with its transaction, the deferral row with it.
    await expect(
      store.transaction(async (tx) => {
        await tx.domainMap.upsertDomains([domain(8, "late", "wallet", 9)]);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(rows("select * from map_derived_deferred")).toEqual([]);
    await store.domainMap.upsertDomain(domain(9, "late", "wallet", 9));
    expectExact();
  });
});
