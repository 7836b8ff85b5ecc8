// A big backfill killed with SIGKILL halfway and restarted ends with the map of an uninterrupted
// one. Not in `npm run bench` (minutes; `npm test` has the small version: crash-safety.test.ts).
//
//   npx tsx bench/crawl-crash.ts [--names 250000] [--postgres 1] [--kill-at 0.5]
//
// Loads the crawl bench's cached world (src/devnet/state-cache.ts: the same key as
// `bench/crawl.bench.ts --names N`; 250,000 names ≈ 1,000,000 events), then in child processes
// (bench/support/crawl-world-child.ts): (1) one uninterrupted backfill into store A, timed (events/s,
// CPU, peak RSS, RSS during the crawl); (2) a backfill into store B killed with SIGKILL once B's
// journal holds `--kill-at` of A's entries, then restarted to the head. Both stores are exported
// (`exportSnapshot`, journal and checkpoints included) and their sorted lines compared, the header's
// `exportedAt` and the checkpoints' `updatedAt` aside. Prints one JSON line.
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { startCachedWorld } from "../src/devnet/state-cache.js";
import { createPostgresStore } from "../src/store/postgres/postgres-store.js";
import { exportSnapshot } from "../src/store/snapshot.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { numberArg } from "./support/args.js";
import { pgAdmin, pgDatabaseUrl } from "./support/pg-copy.js";

const NAMES = numberArg("names", 250_000);
const POSTGRES = numberArg("postgres", 0) !== 0;
const KILL_AT = numberArg("kill-at", 0.5);
const CHILD = join(import.meta.dirname, "support", "crawl-world-child.ts");
const log = (m: string) => process.stderr.write(`${m}\n`);

const dir = mkdtempSync(join(tmpdir(), "omniname-crawl-crash-"));
const world = await startCachedWorld({
  network: "POLYGON",
  names: NAMES,
  batchSize: 250,
  runId: "bench",
  basePort: 43_000,
  log,
});
const pgDbs = POSTGRES ? [`omniname_crash_a_${process.pid}`, `omniname_crash_b_${process.pid}`] : [];

function child(target: string): { proc: ChildProcess; result: Promise<Record<string, unknown> | null> } {
  const proc = spawn(process.execPath, ["--import", "tsx", CHILD, join(dir, "manifest.json"), target], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  proc.stdout?.on("data", (c) => {
    out += c;
  });
  const result = new Promise<Record<string, unknown> | null>((resolve, reject) =>
    proc.once("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve(null);
      else if (code === 0) resolve(JSON.parse(out.trim().split("\n").pop() as string));
      else reject(new Error(`crawl child exited with ${code ?? signal}`));
    }),
  );
  return { proc, result };
}

/**
 * The export's lines, timestamps aside, sorted (`sort`, byte order) and hashed; and the line count.
 * Sorted: the export goes by domain id, and two sources written side by side take ids in whatever
 * order their parts commit, run to run, crash or not; the map is the set of lines.
 */
async function exported(target: string): Promise<{ sha256: string; lines: number }> {
  const store = target.startsWith("postgres://") ? createPostgresStore(target) : createSqliteStore(target);
  const file = `${target.startsWith("postgres://") ? join(dir, target.split("/").pop() as string) : target}.ndjson`;
  try {
    await exportSnapshot(store, file);
  } finally {
    await store.close();
  }
  const normalized = createWriteStream(`${file}.lines`);
  let lines = 0;
  for await (const line of createInterface({ input: createReadStream(file) })) {
    const v = JSON.parse(line) as Record<string, unknown>;
    if (v.type === "header") delete v.exportedAt;
    if (v.type === "checkpoint") delete v.updatedAt;
    if (!normalized.write(`${JSON.stringify(v)}\n`)) await once(normalized, "drain");
    lines++;
  }
  await new Promise<void>((resolve) => normalized.end(resolve));
  rmSync(file, { force: true });
  const sorted = spawn("sort", ["-T", dir, `${file}.lines`], { env: { ...process.env, LC_ALL: "C" } });
  const h = createHash("sha256");
  for await (const chunk of sorted.stdout) h.update(chunk as Buffer);
  const [code] = (await once(sorted, "close")) as [number];
  if (code !== 0) throw new Error(`sort exited with ${code}`);
  rmSync(`${file}.lines`, { force: true });
  return { sha256: h.digest("hex"), lines };
}

try {
  writeFileSync(join(dir, "manifest.json"), JSON.stringify(world.manifest));
  for (const db of pgDbs) await pgAdmin(`create database ${db}`);
  const [a, b] = POSTGRES ? pgDbs.map((db) => pgDatabaseUrl(db)) : [join(dir, "a.db"), join(dir, "b.db")];
  log(
    `world ready in ${(world.readyMs / 1000).toFixed(1)} s (${world.seeded.names} names); uninterrupted backfill…`,
  );
  const uninterrupted = (await child(a).result) as Record<string, unknown>;
  log(`uninterrupted: ${JSON.stringify(uninterrupted)}`);
  const journalOf = async (target: string): Promise<number> => {
    if (target.startsWith("postgres://")) {
      const c = new pg.Client({ connectionString: target });
      await c.connect();
      try {
        const { rows } = await c.query("select coalesce(max(id), 0)::bigint as n from journal");
        return Number(rows[0].n);
      } catch {
        return 0; // the child has not created the tables yet
      } finally {
        await c.end();
      }
    }
    try {
      const conn = new BetterSqlite3(target, { readonly: true, fileMustExist: true });
      try {
        return Number(
          (conn.prepare("select coalesce(max(id), 0) from journal").pluck().get() as number) ?? 0,
        );
      } finally {
        conn.close();
      }
    } catch {
      return 0;
    }
  };
  const total = await journalOf(a);
  const first = child(b);
  let killedAt = 0;
  for (;;) {
    const done = await Promise.race([
      first.result.then(() => true),
      new Promise((r) => setTimeout(r, 100, false)),
    ]);
    if (done) throw new Error("the crawl ended before the kill point: raise --names or lower --kill-at");
    killedAt = await journalOf(b);
    if (killedAt >= total * KILL_AT) break;
  }
  first.proc.kill("SIGKILL");
  await first.result;
  log(`killed with SIGKILL at journal entry ${killedAt} of ${total}; restarting…`);
  const resumed = (await child(b).result) as Record<string, unknown>;
  const [ea, eb] = [await exported(a), await exported(b)];
  process.stdout.write(
    `${JSON.stringify({
      bench: "crawl-crash",
      store: POSTGRES ? "postgres" : "sqlite",
      names: world.seeded.names,
      uninterrupted,
      killedAtJournalEntry: killedAt,
      journalEntries: total,
      resumed,
      exportLines: ea.lines,
      identical: ea.sha256 === eb.sha256 && ea.lines === eb.lines,
      loadAverage: loadavg().map((l) => +l.toFixed(2)),
    })}\n`,
  );
  if (ea.sha256 !== eb.sha256) process.exitCode = 1;
} finally {
  await world.stop();
  for (const db of pgDbs) await pgAdmin(`drop database if exists ${db} with (force)`);
  rmSync(dir, { recursive: true, force: true });
}
