// The crawler's writer alone: CPU per event of writing a captured backfill, without the node, the
// fetch or the decode worker in the measure.
//
//   npx tsx bench/crawl-write.ts [--names 50000] [--postgres 1] [--parts N]
//
// The first run with given names loads the cached bench world of bench/crawl.bench.ts (seeding it
// if needed, BENCH_CACHE_DIR), reads every log of each source block by block with raw
// eth_getLogs, and saves the replies and headers next to the world (logs-<names>.json); later runs
// read that file. The replies are decoded as the decode worker does (outside the clock), then each
// block is written by `writePart` into a fresh store (SQLite, or a fresh PostgreSQL database on
// 127.0.0.1:5432, dropped afterwards), one part a block, the sources taken in turn. Prints one
// JSON line: events, parts, the writer's CPU µs an event (process.cpuUsage: this thread and V8's
// helpers), wall time and the load average.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import pino from "pino";
import { crawlSignals } from "../src/cli/crawler-role.js";
import { loadConfig } from "../src/config/load-config.js";
import type { BlockHeader } from "../src/crawler/chain-reader.js";
import type { SourceContext } from "../src/crawler/crawler-source.js";
import { type DecodedBatch, decodeLogBatch, logsOfBatch, type RpcLog } from "../src/crawler/log-batch.js";
import { writePart } from "../src/crawler/part-writer.js";
import type { RangePart } from "../src/crawler/range-fetch.js";
import { type DevnetManifest, sourcesFromManifest } from "../src/devnet/manifest.js";
import { benchCacheDir, startCachedWorld } from "../src/devnet/state-cache.js";
import { loadScoringLists } from "../src/scoring/scoring-lists.js";
import { createPostgresStore } from "../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { numberArg } from "./support/args.js";

const NAMES = numberArg("names", 50_000);
const POSTGRES = numberArg("postgres", 0) !== 0;
const MAX_PARTS = numberArg("parts", Number.POSITIVE_INFINITY);
const PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres";

interface Capture {
  manifest: DevnetManifest;
  head: number;
  headers: BlockHeader[];
  replies: Array<{ source: string; block: number; logs: RpcLog[] }>;
}

async function capture(file: string): Promise<void> {
  const world = await startCachedWorld({
    network: "POLYGON",
    names: NAMES,
    batchSize: 250,
    runId: "bench",
    basePort: 41_300,
    log: (m) => process.stderr.write(`${m}\n`),
  });
  try {
    const rpc = async <T>(method: string, params: unknown[]): Promise<T> => {
      const res = await fetch(world.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await res.json()) as { result: T }).result;
    };
    const hex = (n: number) => `0x${n.toString(16)}`;
    const head = Number(await rpc<string>("eth_blockNumber", []));
    const headers: BlockHeader[] = [];
    for (let b = 0; b <= head; b++) {
      const h = await rpc<Record<string, string>>("eth_getBlockByNumber", [hex(b), false]);
      headers.push({
        number: b,
        hash: h.hash.toLowerCase(),
        parentHash: h.parentHash.toLowerCase(),
        timestamp: Number.parseInt(h.timestamp, 16),
      });
    }
    const replies: Capture["replies"] = [];
    for (const s of sourcesFromManifest(world.manifest))
      for (let b = s.contracts.startBlock; b <= head; b++)
        for (const f of s.adapter.filters(s.contracts)) {
          const logs = await rpc<RpcLog[]>("eth_getLogs", [
            {
              fromBlock: hex(b),
              toBlock: hex(b),
              ...(f.address ? { address: f.address } : {}),
              topics: [f.topic0],
            },
          ]);
          if (logs.length > 0) replies.push({ source: s.id, block: b, logs });
        }
    writeFileSync(
      file,
      JSON.stringify({ manifest: world.manifest, head, headers, replies } satisfies Capture),
    );
  } finally {
    await world.stop();
  }
}

const file = join(benchCacheDir(), `logs-${NAMES}.json`);
if (!existsSync(file)) await capture(file);
const cap = JSON.parse(readFileSync(file, "utf8")) as Capture;
const sources = sourcesFromManifest(cap.manifest);
const headerOf = new Map(cap.headers.map((h) => [h.number, h]));
// Decoded as the decode worker does, before the clock; one job a source and block.
type Job = { source: (typeof sources)[number]; block: number; batches: DecodedBatch[] };
const bySource = new Map<string, Job[]>();
for (const r of cap.replies) {
  const source = sources.find((s) => s.id === r.source);
  if (!source) continue;
  const jobs = bySource.get(source.id) ?? [];
  bySource.set(source.id, jobs);
  let job = jobs.find((j) => j.block === r.block);
  if (!job) {
    job = { source, block: r.block, batches: [] };
    jobs.push(job);
  }
  job.batches.push(
    decodeLogBatch(r.logs, source.adapter, source.contracts, source.chainId, { from: r.block, to: r.block }),
  );
}
cap.replies = [];
const lists = [...bySource.values()].map((l) => l.sort((a, b) => a.block - b.block));
const jobs: Job[] = [];
for (let i = 0; lists.some((l) => i < l.length); i++)
  for (const l of lists) if (i < l.length) jobs.push(l[i]);

const dir = mkdtempSync(join(tmpdir(), "omniname-crawl-write-"));
const pgDatabase = `omniname_crawl_write_${process.pid}`;
const admin = async (q: string) => {
  const c = new pg.Client({ connectionString: PG_ADMIN });
  await c.connect();
  await c.query(q);
  await c.end();
};
if (POSTGRES) await admin(`create database ${pgDatabase}`);
const store = POSTGRES
  ? createPostgresStore(`postgres://postgres@127.0.0.1:5432/${pgDatabase}`)
  : createSqliteStore(join(dir, "bench.db"));
try {
  await store.migrate();
  const signals = crawlSignals(
    await loadScoringLists(loadConfig({}, { dataDir: dir }), await store.scoring.findKycOwners()),
  );
  const contexts = new Map<string, SourceContext>();
  for (const source of sources)
    contexts.set(source.id, {
      source,
      store,
      reader: {
        headers: async (ns: number[]) => ns.map((n) => headerOf.get(n) as BlockHeader),
      } as unknown as SourceContext["reader"],
      finality: 200,
      signals,
      clock: () => Date.now(),
      log: pino({ level: "silent" }),
    });
  let events = 0;
  let parts = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (const job of jobs) {
    if (parts >= MAX_PARTS) break;
    // The FetchedLogs of the worker's batches, as the chain reader merges them (chain order).
    const logs = job.batches
      .flatMap((b) => logsOfBatch(b, job.source.chainId))
      .sort((a, b) => a.logIndex - b.logIndex);
    const part: RangePart = {
      from: job.block,
      to: job.block,
      logs: Promise.resolve(logs),
      end: Promise.resolve(null),
    };
    const headers = new Map([[job.block, headerOf.get(job.block) as BlockHeader]]);
    await writePart(contexts.get(job.source.id) as SourceContext, part, logs, headers, cap.head);
    events += logs.length;
    parts++;
  }
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(
    `${JSON.stringify({
      bench: "crawl-write",
      store: POSTGRES ? "postgres" : "sqlite",
      events,
      parts,
      domains: await store.domainMap.countDomains(),
      seconds: +seconds.toFixed(2),
      eventsPerSecond: Math.round(events / seconds),
      cpuMicrosPerEvent: +((cpu.user + cpu.system) / events).toFixed(1),
      loadAverage: loadavg().map((l) => +l.toFixed(2)),
    })}\n`,
  );
} finally {
  await store.close();
  if (POSTGRES) await admin(`drop database if exists ${pgDatabase} with (force)`);
  rmSync(dir, { recursive: true, force: true });
}
