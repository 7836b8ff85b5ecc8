import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import pg from "pg";
import { type CommandRun, directoryBytes, rssMbOf, runOmniname, runScript } from "./support/measure.js";
import { type NpmStart, startNpmStart } from "./support/npm-start.js";
import { type ServingRatio, type ServingTarget, servingRatios } from "./support/serving-ratios.js";
import { writeSyntheticSnapshot } from "./support/synthetic-snapshot.js";

/**
 * The map at mainnet's size: a synthetic world of BENCH_SCALE_DOMAINS domains (default
 * 10,000,000; six records each, ~10 % of names in two namespaces, ~20 % with a reverse record)
 * built through the project's own bulk path (`omniname snapshot import`) on SQLite and on
 * PostgreSQL, then every whole-map job run as an operator runs it (the CLI, one process each,
 * peak RSS read from the kernel by GNU time), and the API role started on the big store and
 * loaded. Prints one table per store; every figure is measured in this run.
 *
 * `npm run bench -- scale` runs it (plain `npm run bench` leaves it out: at the default size it
 * needs about an hour and tens of GB). BENCH_SCALE_DOMAINS=1000000 for a quicker look;
 * BENCH_SCALE_DIR puts the files elsewhere (default the system's temporary directory; everything
 * is deleted at the end); BENCH_PG=0 leaves PostgreSQL out.
 */
const DOMAINS = Number(process.env.BENCH_SCALE_DOMAINS ?? 10_000_000);
const WITH_PG = process.env.BENCH_PG !== "0";
/** `BENCH_SCALE_STORES=postgres` (or `sqlite`): one store only. */
const STORES = (process.env.BENCH_SCALE_STORES ?? "sqlite,postgres").split(",").map((s) => s.trim());
/**
 * `BENCH_SCALE_SKIP=rescore,tlds`: leave out those rows (rescore and tlds are the longest at 10M).
 * Every row can be left out: `export`, `zone`, `rescore`, `tlds`, `dryrun`, `kyc`, `api`.
 */
const SKIP = new Set((process.env.BENCH_SCALE_SKIP ?? "").split(",").map((s) => s.trim()));
/**
 * `BENCH_SCALE_SNAPSHOT=FILE`: this synthetic snapshot (written by an earlier run or by
 * `writeSyntheticSnapshot`) instead of a new one; kept afterwards. Its header's `domains` must
 * equal BENCH_SCALE_DOMAINS.
 */
const SNAPSHOT = process.env.BENCH_SCALE_SNAPSHOT ?? "";
/**
 * `BENCH_SCALE_SQLITE_DIR=DIR`: a data directory that already holds this world imported on SQLite
 * (an earlier `omniname snapshot import` of the same snapshot): the import row is skipped and the
 * directory kept afterwards. The jobs that write (rescore, `tlds refresh`, KYC import) change it.
 */
const SQLITE_DIR = process.env.BENCH_SCALE_SQLITE_DIR ?? "";
/**
 * `BENCH_SCALE_PG_DATABASE=NAME`: as BENCH_SCALE_SQLITE_DIR for PostgreSQL, a database on
 * BENCH_PG_URL's server that already holds this world: the import row is skipped and the database
 * kept afterwards.
 */
const PG_DATABASE = process.env.BENCH_SCALE_PG_DATABASE ?? "";
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
/** Names asked in the API rows: one pass cold, then the same names warm. */
const ASKED = Math.min(100_000, DOMAINS);
const CONNECTIONS = 50;
/** The serving rows' hot set (as bench/resolve.bench.ts's), and seconds of timed load per endpoint. */
const SERVING_NAMES = Math.min(20_000, DOMAINS);
const SERVING_SECONDS = Number(process.env.BENCH_SCALE_SECONDS ?? 10);
/** The reference store the serving ratios are compared with (`BENCH_SCALE_REFERENCE=0`: none). */
const REFERENCE = Number(process.env.BENCH_SCALE_REFERENCE ?? 100_000);

interface Row {
  what: string;
  figure: string;
  seconds?: number;
  peakRssMb?: number;
  note?: string;
}

const rate = (n: number, s: number) => `${Math.round(n / Math.max(s, 1e-3)).toLocaleString("en-US")}/s`;
const mb = (x: number) => `${Math.round(x)} MB`;

function printTable(title: string, rows: Row[]): void {
  console.log(`\n${title}`);
  console.log("| What | Figure | Time | Peak RSS | Note |");
  console.log("|---|---|---|---|---|");
  for (const r of rows)
    console.log(
      `| ${r.what} | ${r.figure} | ${r.seconds === undefined ? "" : `${r.seconds.toFixed(1)} s`} | ${
        r.peakRssMb === undefined ? "" : mb(r.peakRssMb)
      } | ${r.note ?? ""} |`,
    );
}

/** The lines after the header (its `exportedAt` differs), hashed: a round trip leaves them identical. */
async function bodyHash(file: string): Promise<string> {
  const h = createHash("sha256");
  let first = true;
  for await (const line of createInterface({
    input: createReadStream(file),
    crlfDelay: Number.POSITIVE_INFINITY,
  })) {
    if (first) {
      first = false;
      continue;
    }
    h.update(line);
    h.update("\n");
  }
  return h.digest("hex");
}

/** The `domains` count a snapshot's header line declares. */
async function headerDomains(file: string): Promise<number> {
  for await (const line of createInterface({
    input: createReadStream(file),
    crlfDelay: Number.POSITIVE_INFINITY,
  }))
    return Number((JSON.parse(line) as { domains?: unknown }).domains);
  return 0;
}

async function pgQuery<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

/** An empty PostgreSQL database of this name (dropped first if it exists); its URL. */
async function freshDatabase(dbName: string): Promise<string> {
  await pgQuery(PG_ADMIN_URL, `drop database if exists ${dbName}`);
  await pgQuery(PG_ADMIN_URL, `create database ${dbName}`);
  return databaseUrlOf(dbName);
}

/** The URL of the database `dbName` on BENCH_PG_URL's server. */
function databaseUrlOf(dbName: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${dbName}`;
  return u.toString();
}

/** Rows of the store for `count` random domain ids (ids are dense after an import into an empty store). */
async function sample(
  dbUrl: string | null,
  sqliteFile: string,
  domains: number,
  count: number,
  query: (ids: string) => string,
): Promise<string[]> {
  // Distinct ids spread over the whole map: i × a prime that does not divide `domains`, modulo it.
  const step = domains % 1_000_003 === 0 ? 999_983 : 1_000_003;
  const ids = Array.from({ length: count }, (_, i) => 1 + ((i * step) % domains)).join(",");
  if (dbUrl !== null) return (await pgQuery<{ v: string }>(dbUrl, query(ids))).map((r) => r.v);
  const db = new Database(sqliteFile, { readonly: true });
  try {
    return (db.prepare(query(ids)).all() as Array<{ v: string }>).map((r) => r.v);
  } finally {
    db.close();
  }
}

/** Names to ask: random domains of the store. */
const sampleNames = (dbUrl: string | null, sqliteFile: string, domains: number, count: number) =>
  sample(dbUrl, sqliteFile, domains, count, (ids) => `select name as v from domains where id in (${ids})`);

/** Wallets to ask reverse-resolve: those of random domains' reverse records. */
const sampleAddresses = (dbUrl: string | null, sqliteFile: string, domains: number, count: number) =>
  sample(
    dbUrl,
    sqliteFile,
    domains,
    count,
    (ids) => `select address as v from reverse_records where domain_id in (${ids})`,
  );

/**
 * A running API as the serving measure's target (bench/support/serving-ratios.ts): a hot set of
 * SERVING_NAMES names (nine in ten indexed) and the wallets of their reverse records.
 */
async function servingTarget(
  name: string,
  api: NpmStart,
  dbUrl: string | null,
  sqliteFile: string,
  domains: number,
): Promise<ServingTarget> {
  const hits = await sampleNames(dbUrl, sqliteFile, domains, Math.round(SERVING_NAMES * 0.9));
  const misses = Array.from({ length: SERVING_NAMES - hits.length }, (_, i) => `nowhere-${i}.wallet`);
  const addresses = await sampleAddresses(dbUrl, sqliteFile, domains, SERVING_NAMES * 5);
  return { name, api, names: [...hits, ...misses], addresses: addresses.slice(0, SERVING_NAMES) };
}

/** One pass of autocannon over `paths`, each asked once. */
async function pass(port: number, key: string, paths: string[]) {
  let i = 0;
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    amount: paths.length,
    headers: { "api-key": key },
    requests: [
      {
        method: "GET",
        setupRequest: (req) => {
          req.path = paths[i++ % paths.length];
          return req;
        },
      },
    ],
  });
  return { rps: r.requests.total / r.duration, p99: r.latency.p99, errors: r.errors + r.timeouts };
}

/** The serving rows: each endpoint's warm ratio to the bare route, and against the reference store's. */
function servingRows(rows: Row[], here: ServingRatio[], ref: ServingRatio[] | null): void {
  for (const r of here) {
    const at = ref?.find((x) => x.label === r.label);
    const vs = at
      ? `; at ${REFERENCE.toLocaleString("en-US")} domains ${at.ratio.toFixed(2)} (${Math.round(at.rps)} req/s): ${(
          r.ratio / at.ratio
        ).toFixed(2)} of it, within 10 %: ${r.ratio >= at.ratio * 0.9 ? "met" : "NOT met"}`
      : "";
    rows.push({
      what: `${r.label}, warm, ÷ bare route`,
      figure: r.ratio.toFixed(2),
      note: `${Math.round(r.rps)} req/s, p99 ${r.p99} ms, ${Math.round(r.cpuPerRequest)} µs CPU a request${
        r.errors ? `, ${r.errors} errors` : ""
      }${vs}; load ${loadavg()[0].toFixed(1)}`,
    });
  }
}

/**
 * A store of REFERENCE domains built as the big one is (a synthetic snapshot imported by the CLI),
 * its API role started: measured with the big store's, slice by slice in the same minutes (the
 * "within 10 % of the 100,000-domain figures"). `close` stops it and deletes it.
 */
async function referenceStore(
  label: "SQLite" | "PostgreSQL",
  work: string,
): Promise<{ target: ServingTarget; close: () => Promise<void> } | null> {
  if (!(REFERENCE > 0 && REFERENCE < DOMAINS)) return null;
  const dir = join(work, `reference-${label}`);
  mkdirSync(dir, { recursive: true });
  const snapshot = join(dir, "world.jsonl");
  await writeSyntheticSnapshot(snapshot, REFERENCE);
  const dbName = `omniname_scale_ref_${process.pid}`;
  const databaseUrl = label === "PostgreSQL" ? await freshDatabase(dbName) : "";
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" };
  const cleanup = async () => {
    if (label === "PostgreSQL")
      await pgQuery(PG_ADMIN_URL, `drop database if exists ${dbName}`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    runOmniname(["snapshot", "import", snapshot], env);
    const api = await startNpmStart({ ...env, OMNINAME_ROLES: "api", PORT: "0", HOST: "127.0.0.1" }, 600_000);
    const target = await servingTarget(
      `${REFERENCE.toLocaleString("en-US")} domains`,
      api,
      databaseUrl || null,
      join(dir, "omniname.db"),
      REFERENCE,
    ).catch(async (e) => {
      await api.stop();
      throw e;
    });
    return {
      target,
      close: async () => {
        await api.stop();
        await cleanup();
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

async function runStore(label: "SQLite" | "PostgreSQL", work: string, snapshot: string): Promise<Row[]> {
  const rows: Row[] = [];
  const reused = label === "SQLite" ? SQLITE_DIR !== "" : PG_DATABASE !== "";
  const dataDir = label === "SQLite" && reused ? SQLITE_DIR : join(work, `data-${label}`);
  mkdirSync(dataDir, { recursive: true });
  const dbName = reused && label === "PostgreSQL" ? PG_DATABASE : `omniname_scale_${process.pid}`;
  const databaseUrl =
    label !== "PostgreSQL" ? "" : reused ? databaseUrlOf(dbName) : await freshDatabase(dbName);
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" };
  const run = (
    what: string,
    args: string[],
    figure: (r: CommandRun) => string,
    note?: (r: CommandRun) => string,
  ) => {
    const r = runOmniname(args, env);
    rows.push({ what, figure: figure(r), seconds: r.seconds, peakRssMb: r.peakRssMb, note: note?.(r) });
    console.log(
      `${label}: ${what}: ${rows[rows.length - 1].figure} in ${r.seconds.toFixed(1)} s, peak RSS ${mb(r.peakRssMb)}`,
    );
    return r;
  };
  try {
    if (reused)
      rows.push({
        what: "snapshot import (build)",
        figure: "skipped",
        note: label === "SQLite" ? `the store in ${dataDir}` : `the database ${dbName}`,
      });
    else run("snapshot import (build)", ["snapshot", "import", snapshot], (r) => rate(DOMAINS, r.seconds));
    const onDisk =
      label === "SQLite"
        ? directoryBytes(dataDir)
        : Number(
            (
              await pgQuery<{ size: string }>(
                databaseUrl,
                `select pg_database_size(current_database()) as size`,
              )
            )[0].size,
          );
    rows.push({
      what: "bytes per domain on disk",
      figure: `${Math.round(onDisk / DOMAINS)} B`,
      note: `${(onDisk / 2 ** 30).toFixed(1)} GiB in all`,
    });

    if (!SKIP.has("export")) {
      const exported = join(work, `export-${label}.jsonl`);
      run("snapshot export", ["snapshot", "export", exported, "--no-journal"], (r) =>
        rate(DOMAINS, r.seconds),
      );
      const same = (await bodyHash(exported)) === (await bodyHash(snapshot));
      rows.push({
        what: "export = the imported file (header aside)",
        figure: same ? "identical" : "DIFFERS",
      });
      rmSync(exported, { force: true });
    }

    if (!SKIP.has("zone")) {
      const zones = join(work, `zones-${label}`);
      run("zone export", ["zone", "export", "--out", zones], (r) => {
        const names = [...r.stdout.matchAll(/: (\d+) names, serial/g)].reduce((n, m) => n + Number(m[1]), 0);
        return `${rate(names, r.seconds)} (${names.toLocaleString("en-US")} names)`;
      });
      rmSync(zones, { recursive: true, force: true });
    }

    if (!SKIP.has("rescore")) run("scoring rescore", ["scoring", "rescore"], (r) => rate(DOMAINS, r.seconds));
    if (!SKIP.has("tlds"))
      run(
        "tlds refresh (the shipped list, then a rescore)",
        ["tlds", "refresh", join(import.meta.dirname, "..", "src", "scoring", "data", "iana-tlds.txt")],
        (r) => rate(DOMAINS, r.seconds),
      );
    if (!SKIP.has("dryrun")) {
      const r = runScript("dry-run.ts", env);
      rows.push({
        what: "settings dry run (provider priority changed)",
        figure: r.stdout.trim(),
        seconds: r.seconds,
        peakRssMb: r.peakRssMb,
      });
    }
    if (!SKIP.has("kyc")) {
      const kyc = join(work, "kyc.txt");
      writeFileSync(
        kyc,
        `${Array.from({ length: 1000 }, (_, i) => `0x${(i * 7919 + 1).toString(16).padStart(40, "0")}`).join("\n")}\n`,
      );
      run(
        "kyc import (1,000 addresses)",
        ["kyc", "import", kyc],
        (r) => r.stdout.trim().split("\n").pop() ?? "",
      );
    }

    if (SKIP.has("api")) return rows;
    const reference = await referenceStore(label, work);
    try {
      // The API role on the big store: how long until it listens, then one cold pass over ASKED
      // random names (90 % indexed, 10 % absent), the same pass warm, and its RSS after.
      const started = performance.now();
      const api = await startNpmStart(
        { ...env, OMNINAME_ROLES: "api", PORT: "0", HOST: "127.0.0.1" },
        600_000,
      );
      try {
        rows.push({
          what: "API role: start to listening",
          figure: `${((performance.now() - started) / 1000).toFixed(2)} s`,
        });
        const dbUrl = label === "PostgreSQL" ? databaseUrl : null;
        const sqliteFile = join(dataDir, "omniname.db");
        const names = await sampleNames(dbUrl, sqliteFile, DOMAINS, Math.round(ASKED * 0.9));
        const misses = Array.from({ length: ASKED - names.length }, (_, i) => `absent-${i}.wallet`);
        const paths = [...names, ...misses]
          .map((n, i) => ({ n, k: (i * 2654435761) >>> 0 }))
          .sort((a, b) => a.k - b.k)
          .map(({ n }) => `/svc/api/v1/resolve?domain=${encodeURIComponent(n)}`);
        // The API process's CPU a request (user + system): steadier than req/s on a shared machine.
        const cpu0 = await api.cpu();
        const cold = await pass(api.port, api.demoKey, paths);
        const cpu1 = await api.cpu();
        const warm = await pass(api.port, api.demoKey, paths);
        const cpu2 = await api.cpu();
        const load = `load ${loadavg()[0].toFixed(1)}`;
        rows.push({
          what: `resolve, first pass over ${paths.length.toLocaleString("en-US")} names (90 % hits)`,
          figure: `${Math.round(cold.rps)} req/s`,
          note: `p99 ${cold.p99} ms; ${(cold.rps / warm.rps).toFixed(2)} of warm; ${Math.round((cpu1 - cpu0) / paths.length)} µs CPU a request; ${load}${cold.errors ? `; ${cold.errors} errors` : ""}`,
        });
        rows.push({
          what: "resolve, the same pass warm",
          figure: `${Math.round(warm.rps)} req/s`,
          note: `p99 ${warm.p99} ms; ${Math.round((cpu2 - cpu1) / paths.length)} µs CPU a request; ${load}`,
        });
        // Warm ratios to the bare route, here and on the reference store (100,000 domains), same run.
        const big = await servingTarget("big", api, dbUrl, sqliteFile, DOMAINS);
        const measured = await servingRatios(
          reference ? [big, reference.target] : [big],
          work,
          SERVING_SECONDS,
        );
        servingRows(
          rows,
          measured.get("big") ?? [],
          reference ? (measured.get(reference.target.name) ?? null) : null,
        );
        const rss = rssMbOf(api.child.pid ?? 0);
        rows.push({
          what: "API RSS after the passes",
          figure: mb(rss.total),
          note: `${mb(rss.anon)} anonymous, ${mb(rss.file)} file pages (the binary, libraries; no SQLite mmap window)`,
        });
      } finally {
        await api.stop();
      }
    } finally {
      await reference?.close();
    }
  } finally {
    if (label === "PostgreSQL" && !reused)
      await pgQuery(PG_ADMIN_URL, `drop database if exists ${dbName}`).catch(() => {});
    if (label === "PostgreSQL" || !reused) rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

const work = mkdtempSync(join(process.env.BENCH_SCALE_DIR ?? tmpdir(), "omniname-scale-"));
try {
  console.log(
    `scale bench: ${DOMAINS.toLocaleString("en-US")} domains in ${work}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const snapshot = SNAPSHOT || join(work, "world.jsonl");
  const common: Row[] = [];
  if (SNAPSHOT) {
    const declared = await headerDomains(SNAPSHOT);
    if (declared !== DOMAINS)
      throw new Error(`BENCH_SCALE_SNAPSHOT holds ${declared} domains, BENCH_SCALE_DOMAINS says ${DOMAINS}`);
    common.push({ what: "synthetic snapshot", figure: "reused", note: SNAPSHOT });
  } else {
    const t0 = performance.now();
    await writeSyntheticSnapshot(snapshot, DOMAINS);
    const genSeconds = (performance.now() - t0) / 1000;
    common.push({
      what: "synthetic snapshot written",
      figure: rate(DOMAINS, genSeconds),
      seconds: genSeconds,
      note: `${(statSync(snapshot).size / 2 ** 30).toFixed(2)} GiB, ${Math.round(statSync(snapshot).size / DOMAINS)} B a domain`,
    });
  }
  printTable("world", common);
  const labels = (["SQLite", "PostgreSQL"] as const).filter(
    (l) => STORES.includes(l === "SQLite" ? "sqlite" : "postgres") && (l === "SQLite" || WITH_PG),
  );
  for (const label of labels) {
    const rows = await runStore(label, work, snapshot);
    printTable(
      `${label}, ${DOMAINS.toLocaleString("en-US")} domains (load average ${loadavg()[0].toFixed(2)})`,
      rows,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
