import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { createApiKey } from "../src/accounts/api-keys.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { cpuOf, startChild, stopChild } from "./support/child-server.js";
import { seedBulk, shuffled } from "./support/seed-bulk.js";

/**
 * Names per second through POST /batch/resolve (1,000 names a call) against GET /resolve (one name
 * a request), both on the app as the server role runs it (scoring ranker, allowlists, plan limits
 * and usage), on the same SQLite map, measured in the same run in alternating slices (ROUNDS) so
 * that the machine's drifting load weighs on both alike. Each side has its own server process, so
 * that the batch server's peak RSS (VmHWM, the kernel's figure) is the batch calls' own.
 *
 * Target: batch names/s >= 3 × single names/s (BENCH_STRICT=1 fails the run below it).
 * BENCH_DOMAINS (default 100,000) and BENCH_SECONDS (default 6) shrink the run.
 */
const DOMAINS = Number(process.env.BENCH_DOMAINS ?? 100_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = 3;
const BATCH = 1000;
/** Enough concurrent calls to keep one event loop busy; a batch call takes tens of milliseconds. */
const BATCH_CONNECTIONS = 4;
const CONNECTIONS = 50;
const V1 = "/svc/api/v1";

interface Run {
  names: number;
  seconds: number;
  cpuUs: number;
  p99: number;
  bad: number;
}

async function load(
  child: { child: ChildProcess; port: number },
  opts: { connections: number; seconds: number; perRequest: number; headers: Record<string, string> },
  next: (req: { path?: string; method?: string; body?: string | Buffer }) => void,
): Promise<Run> {
  const cpu0 = await cpuOf(child.child);
  const r = await autocannon({
    url: `http://127.0.0.1:${child.port}`,
    connections: opts.connections,
    duration: opts.seconds,
    headers: opts.headers,
    requests: [
      {
        setupRequest: (req) => {
          next(req);
          return req;
        },
      },
    ],
  });
  return {
    names: r.requests.total * opts.perRequest,
    seconds: r.duration,
    cpuUs: (await cpuOf(child.child)) - cpu0,
    p99: r.latency.p99,
    bad: r.non2xx + r.errors + r.timeouts,
  };
}

function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const dir = mkdtempSync(join(tmpdir(), "omniname-batch-bench-"));
const children: ChildProcess[] = [];
try {
  const file = join(dir, "bench.db");
  const pepper = randomBytes(16).toString("hex");
  const store = createSqliteStore(file);
  await store.migrate();
  const world = seedBulk(store, DOMAINS);
  const project = await store.projects.createProject({ name: "bench", plan: "internal" });
  const { key } = await createApiKey(store, pepper, project.id, "bench");
  await store.close();

  const single = await startChild("api-server.ts", [file, pepper]);
  children.push(single.child);
  const batch = await startChild("api-server.ts", [file, pepper]);
  children.push(batch.child);
  const rssBefore = peakRssMb(batch.child.pid);

  // The same 20,000 names on both sides: single requests one by one, batch calls 1,000 at a time.
  const names = shuffled(world.names).slice(0, 20_000);
  const paths = names.map((n) => `${V1}/resolve?domain=${encodeURIComponent(n)}`);
  const bodies = Array.from({ length: names.length / BATCH }, (_, i) =>
    JSON.stringify({ domains: names.slice(i * BATCH, (i + 1) * BATCH) }),
  );
  const headers = { "api-key": key };
  const check = await fetch(`http://127.0.0.1:${batch.port}${V1}/batch/resolve`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: bodies[0],
  });
  const answered = (await check.json()) as { data: Array<{ result: boolean }> };
  if (check.status !== 200 || answered.data.length !== BATCH || !answered.data.every((d) => d.result))
    throw new Error(`a batch of ${BATCH} names answered ${check.status}, not every name resolved`);

  let p = 0;
  let b = 0;
  const singleRun = (seconds: number) =>
    load(single, { connections: CONNECTIONS, seconds, perRequest: 1, headers }, (req) => {
      req.method = "GET";
      req.path = paths[p++ % paths.length];
    });
  const batchRun = (seconds: number) =>
    load(
      batch,
      {
        connections: BATCH_CONNECTIONS,
        seconds,
        perRequest: BATCH,
        headers: { ...headers, "content-type": "application/json" },
      },
      (req) => {
        req.method = "POST";
        req.path = `${V1}/batch/resolve`;
        req.body = bodies[b++ % bodies.length];
      },
    );
  // Warm-up: every name once on each side (JIT, the store's caches, the answer bytes), then 1 s.
  await singleRun(Math.max(1, Math.ceil(paths.length / 20_000)));
  await batchRun(2);
  const runs = { single: [] as Run[], batch: [] as Run[] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.single.push(await singleRun(DURATION / ROUNDS));
    runs.batch.push(await batchRun(DURATION / ROUNDS));
  }
  const sum = (rs: Run[]) => ({
    namesPerS: rs.reduce((n, r) => n + r.names, 0) / rs.reduce((n, r) => n + r.seconds, 0),
    cpuPerName:
      rs.reduce((n, r) => n + r.cpuUs, 0) /
      Math.max(
        1,
        rs.reduce((n, r) => n + r.names, 0),
      ),
    p99: Math.max(...rs.map((r) => r.p99)),
    bad: rs.reduce((n, r) => n + r.bad, 0),
  });
  const s = sum(runs.single);
  const t = sum(runs.batch);
  if (s.bad + t.bad > 0) throw new Error(`non-2xx answers or errors: single ${s.bad}, batch ${t.bad}`);
  const ratio = t.namesPerS / s.namesPerS;
  console.log(
    `\n${DOMAINS} domains (SQLite), ${DURATION} s a side in ${ROUNDS} rounds; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} (${cpus().length} cores)`,
  );
  console.log("side                            names/s  CPU µs/name  p99 ms/request  peak RSS MB");
  console.log(
    `resolve, 1 name a request (${CONNECTIONS} conn) ${s.namesPerS.toFixed(0).padStart(8)} ${s.cpuPerName.toFixed(1).padStart(12)} ${s.p99.toFixed(1).padStart(15)} ${peakRssMb(single.child.pid).toFixed(0).padStart(12)}`,
  );
  console.log(
    `batch/resolve, ${BATCH} names (${BATCH_CONNECTIONS} conn) ${t.namesPerS.toFixed(0).padStart(7)} ${t.cpuPerName.toFixed(1).padStart(12)} ${t.p99.toFixed(1).padStart(15)} ${peakRssMb(batch.child.pid).toFixed(0).padStart(12)}`,
  );
  console.log(`batch server peak RSS before the load: ${rssBefore.toFixed(0)} MB`);
  console.log(
    `\nbatch / single names per second = ${ratio.toFixed(2)} (target >= 3): ${ratio >= 3 ? "met" : "NOT met"}`,
  );
  if (ratio < 3 && process.env.BENCH_STRICT === "1") process.exitCode = 1;
} finally {
  for (const c of children) await stopChild(c);
  rmSync(dir, { recursive: true, force: true });
}
