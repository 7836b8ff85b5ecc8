// The crawler's reverse-record writes of a range: one call per address (setReverse, as before
// applyReverses) against one call for the range (applyReverses), in the crawler's transaction.
//
//   npx tsx bench/reverse-writes.ts [--addresses 20000] [--rounds 3] [--postgres 1]
//
// A fresh store (SQLite in a temporary directory, or a fresh PostgreSQL database on BENCH_PG_URL's
// server, default 127.0.0.1:5432, dropped afterwards) with one domain per address; each round
// writes every address's reverse record once per way, the two ways alternated, on new addresses
// each time. Prints one JSON line: µs an address each way per round, their ratio, the load average.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { ReverseChange } from "../src/store/domain-map.port.js";
import { createPostgresStore } from "../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Store } from "../src/store/store.js";
import { numberArg } from "./support/args.js";
import { pgAdmin, pgDatabaseUrl } from "./support/pg-copy.js";

const ADDRESSES = numberArg("addresses", 20_000);
const ROUNDS = numberArg("rounds", 3);
const POSTGRES = numberArg("postgres", 0) !== 0;
const pgDatabase = `omniname_reverse_bench_${process.pid}`;

const dir = mkdtempSync(join(tmpdir(), "omniname-reverse-bench-"));
let store: Store;
if (POSTGRES) {
  await pgAdmin(`create database ${pgDatabase}`);
  store = createPostgresStore(pgDatabaseUrl(pgDatabase));
} else store = createSqliteStore(join(dir, "bench.db"));
try {
  await store.migrate();
  const token = (i: number) => `0x${i.toString(16).padStart(64, "0")}`;
  const ids = await store.transaction((tx) =>
    tx.domainMap.upsertDomains(
      Array.from({ length: ADDRESSES * 2 * ROUNDS }, (_, i) => ({
        provider: "NAMESPACE_B" as const,
        network: "POLYGON" as const,
        tokenId: token(i),
        name: `r${i}.crypto`,
        rname: `otpyrc.${[...`r${i}`].reverse().join("")}`,
        sld: `r${i}`,
        tld: "crypto",
        owner: `0x${i.toString(16).padStart(40, "0")}`,
        contractAddress: "0x0000000000000000000000000000000000000001",
        resolver: null,
        registeredAt: 1_700_000_000_000,
        registeredBlock: 1,
        expiresAt: null,
        lastUpdateBlock: 1,
        lastUpdateAt: 1_700_000_000_000,
        baseScore: 0,
        spam: false,
        csamOk: true,
        kyc: false,
        tags: [],
      })),
    ),
  );
  let next = 0;
  const batch = (): ReverseChange[] =>
    Array.from({ length: ADDRESSES }, () => {
      const i = next++;
      return {
        network: "POLYGON",
        provider: "NAMESPACE_B",
        address: `0x${i.toString(16).padStart(40, "0")}`,
        domainId: ids[i],
      };
    });
  const rounds: Array<{ oneByOne: number; batched: number }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const a = batch();
    let t = performance.now();
    await store.transaction(async (tx) => {
      for (const c of a) await tx.domainMap.setReverse({ ...c, domainId: c.domainId as number });
    });
    const oneByOne = ((performance.now() - t) * 1000) / ADDRESSES;
    const b = batch();
    t = performance.now();
    await store.transaction((tx) => tx.domainMap.applyReverses(b));
    const batched = ((performance.now() - t) * 1000) / ADDRESSES;
    rounds.push({ oneByOne: Number(oneByOne.toFixed(2)), batched: Number(batched.toFixed(2)) });
  }
  const mean = (k: "oneByOne" | "batched") => rounds.reduce((s, x) => s + x[k], 0) / rounds.length;
  console.log(
    JSON.stringify({
      bench: "reverse-writes",
      store: POSTGRES ? "postgres" : "sqlite",
      addresses: ADDRESSES,
      microsPerAddress: rounds,
      ratio: Number((mean("oneByOne") / mean("batched")).toFixed(1)),
      loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
    }),
  );
} finally {
  await store.close();
  if (POSTGRES) await pgAdmin(`drop database if exists ${pgDatabase} with (force)`);
  rmSync(dir, { recursive: true, force: true });
}
