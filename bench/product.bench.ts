// The figures a user meets, through `omniname start` as a user runs it (the build's
// bin/omniname.js; the embedded devnet mining a block a second, the crawler with newHeads, the API,
// DNS), each against its baseline in the same run:
//
//   npm run bench -- product          (or: npx tsx bench/product.bench.ts)
//
// Rows, on SQLite (DATA_DIR only) and on PostgreSQL (DATABASE_URL):
// - resolve, deep-resolve and reverse-resolve under load (autocannon, 50 keep-alive connections)
//   over the demo world's names and owners, as a ratio to a bare Fastify route sending the same
//   bytes, slices taken in turns (support/serving-ratios.ts);
// - block mined → the API serves the name it minted (support/freshness-probe.ts): on SQLite all
//   roles in one process; on PostgreSQL also a crawler process and a separate API process (the
//   change channel between them). Aim: median < 250 ms; the baseline is the block interval.
//
// BENCH_SECONDS (10: timed load per endpoint), BENCH_ROUNDS (9: names minted per freshness row),
// BENCH_PG=0 (SQLite only), BENCH_PRODUCT_SKIP (any of `resolve,fresh`).
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { findDevnetManifest, sourcesFromManifest } from "../src/devnet/manifest.js";
import { freshnessThroughApi } from "./support/freshness-probe.js";
import { type NpmStart, startNpmStart } from "./support/npm-start.js";
import { startRole } from "./support/omniname-role.js";
import { PG_ADMIN_URL, pgAdmin } from "./support/pg-copy.js";
import { quantileMs } from "./support/devnet-world.js";
import { servingRatios } from "./support/serving-ratios.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const WITH_PG = process.env.BENCH_PG !== "0";
const SKIP = new Set((process.env.BENCH_PRODUCT_SKIP ?? "").split(",").map((s) => s.trim()));

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

interface Row {
  store: string;
  what: string;
  figure: string;
  baseline: string;
  ratio: string;
  load: string;
}
const rows: Row[] = [];

/** The environment of a user's `omniname start`: nothing of this shell's omniname settings. */
function userEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (
      /^(RPC_URL_|RPC_WS_URL_|REDIS_URL$|DATABASE_URL$|OMNINAME_|PUBLIC_URL$|CRAWLER_|DNS_|API_KEY_PEPPER$)/.test(
        k,
      )
    )
      delete env[k];
  return {
    ...env,
    DATA_DIR: dataDir,
    PORT: "0",
    HOST: "127.0.0.1",
    // A free port of its own (the default 8053 may be another run's).
    DNS_PORT: String(30_000 + Math.floor(Math.random() * 20_000)),
    LOG_LEVEL: "warn",
    ...extra,
  };
}

/** The demo world's names and owners, read from the manifest's store through the API's own data. */
function demoWorld(dataDir: string) {
  const manifest = findDevnetManifest(dataDir);
  if (!manifest) throw new Error(`no devnet manifest in ${dataDir}`);
  const uns = sourcesFromManifest(manifest).find((s) => s.id === "uns-polygon");
  if (!uns) throw new Error("the devnet has no uns-polygon source");
  return {
    rpcUrl: uns.rpcUrl,
    mintingManager: uns.contracts.addresses.mintingManager as `0x${string}`,
  };
}

async function freshnessRow(store: string, dataDir: string, apiPort: number, apiKey: string) {
  const world = demoWorld(dataDir);
  const latencies = await freshnessThroughApi({
    ...world,
    apiBase: `http://127.0.0.1:${apiPort}`,
    apiKey,
    rounds: ROUNDS,
  });
  const median = quantileMs(latencies, 0.5);
  rows.push({
    store,
    what: "block mined → API serves it",
    figure: `median ${median} ms (min ${quantileMs(latencies, 0)}, max ${quantileMs(latencies, 1)}; ${latencies.length} names)`,
    baseline: "block interval 1,000 ms",
    ratio: `${(median / 1000).toFixed(2)} (aim median < 250 ms: ${median < 250 ? "met" : "NOT met"})`,
    load: load(),
  });
}

/** Names and owners the demo world serves, from the store the process wrote. */
async function namesOf(list: () => Promise<Array<{ name: string; owner: string | null }>>) {
  const rowsOf = await list();
  return {
    names: [...new Set(rowsOf.map((r) => r.name))],
    addresses: [...new Set(rowsOf.flatMap((r) => (r.owner ? [r.owner] : [])))],
  };
}

/** At least 1,000 queries in turn (the demo world is small; the load has 50 connections). */
const padded = (xs: string[]) =>
  Array.from({ length: Math.max(xs.length, 1_000) }, (_, i) => xs[i % xs.length]);

/** Of the v1 answers so far (resolve, deep-resolve, reverse-resolve), those the fast path gave. */
async function fastShare(port: number): Promise<{ fast: number; all: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let fast = 0;
  let all = 0;
  for (const line of text.split("\n")) {
    const value = Number(line.split(" ").pop());
    if (line.startsWith("omniname_api_fast_answers_total ")) fast = value;
    else if (
      /^omniname_api_requests_total\{route="\/svc\/api\/v1\/(resolve|deep-resolve|reverse-resolve)"/.test(
        line,
      )
    )
      all += value;
  }
  return { fast, all };
}

async function resolveRows(store: string, npm: NpmStart, dir: string, names: string[], addresses: string[]) {
  const target = { name: store, api: npm, names: padded(names), addresses: padded(addresses) };
  const ratios = await servingRatios([target], dir, SECONDS);
  const share = await fastShare(npm.port);
  rows.push({
    store,
    what: "v1 answers given by the fast path",
    figure: `${share.fast} of ${share.all}`,
    baseline: "every v1 answer of the run",
    ratio: (share.fast / Math.max(1, share.all)).toFixed(3),
    load: load(),
  });
  // Two baselines: the bare route sending the same body with Fastify's own headers, and the same
  // route sending the answer's header fields too (the same bytes on the wire). The aim is read
  // against the second; both are printed.
  for (const r of ratios.get(store) ?? [])
    rows.push({
      store,
      what: `${r.label} (${r.cpuPerRequest.toFixed(0)} µs CPU/req, p99 ${r.p99} ms)`,
      figure: `${r.rps.toFixed(0)} req/s`,
      baseline: `${r.bareSameHeadersRps.toFixed(0)} req/s bare route, same headers (${r.bareRps.toFixed(0)} body only)`,
      ratio: `${r.ratioSameHeaders.toFixed(2)} (aim ≥ 0.9: ${r.ratioSameHeaders >= 0.9 ? "met" : "NOT met"}; body only ${r.ratio.toFixed(2)})`,
      load: load(),
    });
}

const dir = mkdtempSync(join(tmpdir(), "omniname-product-"));
const pgName = `omniname_product_${randomBytes(5).toString("hex")}`;
try {
  // SQLite: `npm start` with nothing configured.
  {
    const dataDir = join(dir, "sqlite");
    const npm = await startNpmStart(userEnv(dataDir));
    try {
      if (!SKIP.has("fresh")) await freshnessRow("SQLite", dataDir, npm.port, npm.demoKey);
      if (!SKIP.has("resolve")) {
        const { default: Database } = await import("better-sqlite3");
        const db = new Database(join(dataDir, "omniname.db"), { readonly: true, fileMustExist: true });
        const w = await namesOf(
          async () =>
            db.prepare("select name, owner from domains where name like '%.%'").all() as Array<{
              name: string;
              owner: string | null;
            }>,
        );
        db.close();
        await resolveRows("SQLite", npm, dir, w.names, w.addresses);
      }
    } finally {
      await npm.stop();
    }
  }
  if (WITH_PG) {
    await pgAdmin(`create database ${pgName}`);
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${pgName}`;
    const databaseUrl = url.toString();
    const dataDir = join(dir, "postgres");
    const npm = await startNpmStart(userEnv(dataDir, { DATABASE_URL: databaseUrl }));
    try {
      if (!SKIP.has("fresh")) await freshnessRow("PostgreSQL", dataDir, npm.port, npm.demoKey);
      if (!SKIP.has("resolve")) {
        const c = new pg.Client({ connectionString: databaseUrl });
        await c.connect();
        const r = await c
          .query<{ name: string; owner: string | null }>(
            "select name, owner from domains where name like '%.%'",
          )
          .finally(() => c.end());
        const w = await namesOf(async () => r.rows);
        await resolveRows("PostgreSQL", npm, dir, w.names, w.addresses);
      }
    } finally {
      await npm.stop();
    }
    if (!SKIP.has("fresh")) {
      // Scale-out: the crawler (with the devnet) in one process, the API in another, on one
      // database: the API hears of the crawler's commits over the change channel.
      const crawler = await startRole(
        userEnv(dataDir, { DATABASE_URL: databaseUrl, OMNINAME_ROLES: "crawler" }),
        /omniname crawler is running/,
      );
      try {
        const api = await startNpmStart(
          userEnv(join(dir, "postgres-api"), {
            DATABASE_URL: databaseUrl,
            OMNINAME_ROLES: "api",
            OMNINAME_DEMO_API_KEY: readFileSync(join(dataDir, "demo-api-key"), "utf8").trim(),
            API_KEY_PEPPER: readFileSync(join(dataDir, "pepper"), "utf8").trim(),
          }),
        );
        try {
          await freshnessRow("PostgreSQL, crawler and API processes", dataDir, api.port, api.demoKey);
        } finally {
          await api.stop();
        }
      } finally {
        await crawler.stop();
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (WITH_PG) await pgAdmin(`drop database if exists ${pgName} with (force)`).catch(() => {});
}

console.log(`\nproduct figures through omniname start, ${cpus().length} cores (load average per row)`);
console.log("| store | what | figure | baseline, same run | ratio | load average |");
console.log("|---|---|---|---|---|---|");
for (const r of rows)
  console.log(`| ${r.store} | ${r.what} | ${r.figure} | ${r.baseline} | ${r.ratio} | ${r.load} |`);
