import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { createTestDatabase } from "../helpers/pg.js";
import { dropRedisKeys } from "../helpers/redis-keys.js";
import { type ServerProcess, startServerProcess, stopServerProcess } from "../helpers/server-process.js";

/**
 * The soak: PostgreSQL + Redis, two API processes and one crawler process
 * (`omniname crawl`) on the devnet (anvil, a block every second) while `omniname devnet simulate`
 * keeps registering and changing names. Mixed resolve / deep-resolve / reverse-resolve load goes
 * to both API processes for SOAK_S seconds after a WARMUP_S warm-up.
 *
 * Asserted:
 * - no error: every answer is 200, or 404 DOMAIN_NOT_FOUND from `resolve` (names probed before
 *   the simulator registers them: expected);
 * - memory flat: each API process's raw VmRSS (/proc/<pid>/status, sampled every second) grew
 *   less than 10 % from the 10 s after the warm-up to the last 10 s (medians); and right after a full garbage
 *   collection (through the process's inspector), under load 3 s before the end, its V8 heap in
 *   use is less than 10 % above the same reading at the end of the warm-up, its VmRSS less than
 *   20 % above;
 * - freshness (docs/operations.md, "Soak"): a change is *indexed* when a watcher polling the
 *   database every 50 ms first sees it committed; an answer is *stale* when its request was sent
 *   after a newer state of its name was indexed, and its age is the time between that indexing and
 *   the request. Two kinds of change are traced through the simulator's names: a registration
 *   (the answer is 404 though the name was indexed) and a record value (the simulator writes
 *   `v<n>` with n growing; the answer shows v<k> though a v<m>, m > k, was indexed). No answer may
 *   be older than 1 s.
 *
 * SOAK_S (default 60) and SOAK_CLIENTS (per API process, default 6) can be changed in the
 * environment.
 */
const SOAK_S = Number(process.env.SOAK_S ?? 60);
const WARMUP_S = 20;
/** Seconds of RSS samples whose median is compared: right after the warm-up, and at the end. */
const RSS_WINDOW_S = 10;
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 6);
const SIM_RATE = 5;
const FRESH_MS = 1_000;
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const V1 = "/svc/api/v1";

interface Answer {
  server: number;
  kind: "resolve" | "deep" | "reverse";
  name: string;
  sentAt: number;
  ms: number;
  status: number;
  code: string | null;
  /** resolve: the highest `v<n>` record value of the answer (-1 for a 404, 0 for none). */
  version: number;
}

/** A child process whose output is kept (for the report of a failure). */
function child(args: string[], env: NodeJS.ProcessEnv): { proc: ChildProcess; output: () => string } {
  const proc = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout?.on("data", (d) => {
    out += d;
  });
  proc.stderr?.on("data", (d) => {
    out += d;
  });
  return { proc, output: () => out };
}

/**
 * A full garbage collection in a process started with `--inspect=127.0.0.1:0` (through its
 * inspector, HeapProfiler.collectGarbage), then its VmRSS and V8 heap in use: what it retains,
 * without the garbage that a sawtooth of major collections leaves in a raw RSS sample.
 */
async function afterFullGc(s: ServerProcess): Promise<{ rssKb: number; heapUsedKb: number }> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(s.output())?.[1];
  if (!url) throw new Error("the process has no inspector");
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let id = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<{ result?: { result?: { value?: unknown } } }>((resolve) => {
      const my = ++id;
      const on = (data: WebSocket.RawData) => {
        const m = JSON.parse(data.toString()) as { id?: number };
        if (m.id !== my) return;
        ws.off("message", on);
        resolve(m as { result?: { result?: { value?: unknown } } });
      };
      ws.on("message", on);
      ws.send(JSON.stringify({ id: my, method, params }));
    });
  try {
    await call("HeapProfiler.collectGarbage");
    const heap = await call("Runtime.evaluate", {
      expression: "process.memoryUsage().heapUsed",
      returnByValue: true,
    });
    return { rssKb: rssKb(s.child.pid ?? 0), heapUsedKb: Number(heap.result?.result?.value) / 1024 };
  } finally {
    ws.close();
  }
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

/** The middle of the samples: one high sample of a sawtooth (a major GC not yet run) moves it little. */
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const versionOf = (records: Record<string, string> | undefined) =>
  Math.max(0, ...Object.values(records ?? {}).map((v) => Number(/^v(\d+)$/.exec(v)?.[1] ?? 0)));

describe("soak: 2 API processes + 1 crawler on PostgreSQL and Redis while the devnet changes names", () => {
  let devnet: Devnet;
  let dataDir: string;
  let db: { url: string; drop: () => Promise<void> };
  const dirs: string[] = [];
  const apis: ServerProcess[] = [];
  let crawler: ReturnType<typeof child>;
  let simulator: ReturnType<typeof child> | null = null;
  const prefix = `omniname-soak-${randomBytes(4).toString("hex")}`;
  const key = `soak-${randomBytes(16).toString("hex")}`;
  let watch: pg.Client;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "omniname-soak-"));
    devnet = await startDevnet({
      dataDir,
      persist: false,
      seed: true,
      blockTime: 1,
      logs: false,
      networks: ["ETHEREUM", "POLYGON"],
      basePort: 20_000 + Math.floor(Math.random() * 20_000),
    });
    db = await createTestDatabase();
    const base: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: "warn" };
    delete base.PUBLIC_URL;
    delete base.RPC_URL_ETHEREUM;
    delete base.RPC_URL_POLYGON;
    crawler = child(["crawl"], {
      ...base,
      DATA_DIR: dataDir,
      INSTANCE_ID: "soak-crawler",
      CRAWLER_POLL_INTERVAL_MS: "200",
    });
    watch = new pg.Client({ connectionString: db.url });
    await watch.connect();
    // Caught up: every source's checkpoint within 2 blocks of its chain's head.
    const until = Date.now() + 120_000;
    for (;;) {
      const r = await watch
        .query<{ n: string; live: string }>(
          "select count(*) as n, count(*) filter (where state = 'live') as live from checkpoints",
        )
        .catch(() => null);
      if (r && Number(r.rows[0].n) > 0 && r.rows[0].n === r.rows[0].live) break;
      if (Date.now() > until || crawler.proc.exitCode !== null)
        throw new Error(`the crawler did not catch up:\n${crawler.output()}`);
      await new Promise((res) => setTimeout(res, 250));
    }
    const pepper = randomBytes(16).toString("hex");
    const apiDirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), "omniname-soak-api-")));
    dirs.push(...apiDirs);
    // Both start at once, as a deployment's do (the demo key's registration is safe for that).
    const started = await Promise.allSettled(
      apiDirs.map((dir) =>
        startServerProcess({
          ...base,
          DATA_DIR: dir,
          PORT: "0",
          HOST: "127.0.0.1",
          OMNINAME_ROLES: "api",
          REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          OMNINAME_DEMO_API_KEY: key,
          API_KEY_PEPPER: pepper,
          // The inspector (on a free port) lets the test run a full GC before reading RSS.
          NODE_OPTIONS: [process.env.NODE_OPTIONS ?? "", "--inspect=127.0.0.1:0"].join(" ").trim(),
        }),
      ),
    );
    for (const r of started) if (r.status === "fulfilled") apis.push(r.value);
    for (const r of started) if (r.status === "rejected") throw r.reason;
  }, 240_000);

  afterAll(async () => {
    for (const s of apis) await stopServerProcess(s).catch(() => {});
    for (const c of [simulator, crawler]) if (c && c.proc.exitCode === null) c.proc.kill("SIGKILL");
    await watch?.end().catch(() => {});
    await devnet?.stop();
    await dropRedisKeys(REDIS_URL, `${prefix}:*`).catch(() => {});
    await db?.drop();
    for (const d of [dataDir, ...dirs]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it(
    `serves ${SOAK_S} s of mixed load with no error, flat RSS and no answer staler than 1 s`,
    async () => {
      // The fixture names and owners to query, from the index.
      const fixtures = await watch.query<{ name: string; owner: string }>(
        "select name, owner from domains where name like '%.%' order by id limit 200",
      );
      const fixtureNames = [...new Set(fixtures.rows.map((r) => r.name))];
      const owners = [...new Set(fixtures.rows.map((r) => r.owner))];
      expect(fixtureNames.length).toBeGreaterThan(5);

      simulator = child(["devnet", "simulate", "--rate", String(SIM_RATE), "--seed", "12"], {
        ...process.env,
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
      });

      // The watcher: when each simulated name, and each of its record values, was first seen indexed.
      const registeredAt = new Map<string, number>();
      /** Per name: [version, indexed at] in the order first seen. */
      const versionsOf = new Map<string, Array<[number, number]>>();
      let runId: string | null = null;
      let maxCounter = 0;
      const simOwners = new Set<string>();
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          const now = performance.now();
          const r = await watch.query<{ name: string; owner: string; value: string | null }>(
            `select d.name, d.owner, r.value from domains d
           left join records r on r.domain_id = d.id and r.value like 'v%'
           where d.name like 'sim-%'`,
          );
          for (const row of r.rows) {
            if (!registeredAt.has(row.name)) registeredAt.set(row.name, now);
            simOwners.add(row.owner);
            const m = /^sim-([0-9a-z]+)-(\d+)\./.exec(row.name);
            if (m) {
              runId = m[1];
              maxCounter = Math.max(maxCounter, Number(m[2]));
            }
            const v = Number(/^v(\d+)$/.exec(row.value ?? "")?.[1] ?? 0);
            if (v > 0) {
              const list = versionsOf.get(row.name) ?? [];
              if (!list.some(([x]) => x === v)) list.push([v, now]);
              versionsOf.set(row.name, list);
            }
          }
          await new Promise((res) => setTimeout(res, 50));
        }
      })();

      const rand = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)];
      /** A simulated name: one already indexed, or one the simulator is about to register. */
      const simName = (): string | null => {
        if (runId === null) return null;
        if (Math.random() < 0.3)
          return `sim-${runId}-${maxCounter + 1 + Math.floor(Math.random() * 8)}.${rand(["sim", "eth"])}`;
        const known = [...registeredAt.keys()];
        return known.length > 0 ? rand(known) : null;
      };
      const answers: Answer[] = [];
      const failures: string[] = [];
      const t0 = performance.now();
      const stopAt = t0 + (WARMUP_S + SOAK_S) * 1000;

      async function client(server: number): Promise<void> {
        const origin = apis[server].url;
        while (performance.now() < stopAt) {
          const r = Math.random();
          const kind: Answer["kind"] = r < 0.6 ? "resolve" : r < 0.8 ? "deep" : "reverse";
          let name: string;
          let url: string;
          if (kind === "reverse") {
            name = Math.random() < 0.5 && simOwners.size > 0 ? rand([...simOwners]) : rand(owners);
            url = `${V1}/reverse-resolve?walletAddress=${name}`;
          } else {
            name = (Math.random() < 0.6 ? simName() : null) ?? rand(fixtureNames);
            url = `${V1}/${kind === "deep" ? "deep-resolve" : "resolve"}?domain=${encodeURIComponent(name)}`;
          }
          const sentAt = performance.now();
          try {
            const res = await fetch(`${origin}${url}`, { headers: { "api-key": key } });
            const body = (await res.json()) as {
              data?: { records?: Record<string, string> };
              error?: { code: string };
            };
            answers.push({
              server,
              kind,
              name,
              sentAt,
              ms: performance.now() - sentAt,
              status: res.status,
              code: body.error?.code ?? null,
              version: res.status === 404 ? -1 : kind === "resolve" ? versionOf(body.data?.records) : 0,
            });
          } catch (e) {
            failures.push(`${url}: ${(e as Error).message}`);
          }
        }
      }

      // RSS and /readyz of each API process, every second.
      const rss: number[][] = apis.map(() => []);
      const readyz: Array<Record<string, unknown>> = [];
      const sampler = setInterval(() => {
        for (const [i, s] of apis.entries()) rss[i].push(rssKb(s.child.pid ?? 0));
        for (const s of apis)
          fetch(`${s.url}/readyz`)
            .then((r) => r.json())
            .then((j) => readyz.push(j as Record<string, unknown>))
            .catch((e: unknown) => failures.push(`readyz: ${(e as Error).message}`));
      }, 1_000);
      // RSS after a full GC, under load: once the warm-up is over, and 3 s before the end.
      const gcStart: Array<Promise<Array<{ rssKb: number; heapUsedKb: number }>>> = [];
      const gcTimers = [t0 + WARMUP_S * 1000, stopAt - 3_000].map((at) =>
        setTimeout(() => gcStart.push(Promise.all(apis.map(afterFullGc))), at - performance.now()),
      );
      await Promise.all(apis.flatMap((_, i) => Array.from({ length: CLIENTS }, () => client(i))));
      for (const t of gcTimers) clearTimeout(t);
      const [gcBegin, gcEnd] = await Promise.all(gcStart);
      clearInterval(sampler);
      watching = false;
      await watcher;
      simulator.proc.kill("SIGTERM");
      const simExit = await new Promise<number | null>((res) => simulator!.proc.once("exit", res));

      // Errors: anything but 200, or 404 DOMAIN_NOT_FOUND from resolve.
      const errors = answers.filter(
        (a) =>
          !(a.status === 200 || (a.status === 404 && a.kind === "resolve" && a.code === "DOMAIN_NOT_FOUND")),
      );
      const expected404 = answers.filter((a) => a.status === 404).length;

      // Freshness over every resolve answer of a simulated name.
      let maxStaleMs = 0;
      let staleAnswers = 0;
      let traced = 0;
      /** Answers that showed a simulated record value: the record half of the freshness check ran. */
      let withRecord = 0;
      for (const a of answers) {
        if (a.kind !== "resolve" || !a.name.startsWith("sim-")) continue;
        const reg = registeredAt.get(a.name);
        let newerIndexedAt: number | null = null;
        if (a.version === -1) {
          if (reg !== undefined) newerIndexedAt = reg;
        } else if (a.version > 0) {
          for (const [v, at] of versionsOf.get(a.name) ?? [])
            if (v > a.version && (newerIndexedAt === null || at < newerIndexedAt)) newerIndexedAt = at;
        }
        if (a.version !== 0) traced++;
        if (a.version > 0) withRecord++;
        if (newerIndexedAt !== null && newerIndexedAt < a.sentAt) {
          staleAnswers++;
          maxStaleMs = Math.max(maxStaleMs, a.sentAt - newerIndexedAt);
        }
      }

      // Throughput and latency over the measured part (after the warm-up).
      const measuredFrom = t0 + WARMUP_S * 1000;
      const measured = answers.filter((a) => a.sentAt >= measuredFrom);
      const rps = measured.length / SOAK_S;
      const p99 = percentile(
        measured.map((a) => a.ms),
        99,
      );
      const byKind = Object.fromEntries(
        (["resolve", "deep", "reverse"] as const).map((k) => [
          k,
          measured.filter((a) => a.kind === k).length,
        ]),
      );
      // The start window is the second after the warm-up: the first begins with the full GC this test
      // forces at the warm-up's end (gcBegin), and the RSS it dropped to (223 MB from 296 once) is
      // regrown over the next ~15 s to the steady state the end window is compared with (a flat
      // process measured 15 % "growth" that way under the full suite's load, with post-GC RSS +1.9 %).
      const rssStart = rss.map((xs) =>
        median(xs.slice(WARMUP_S + RSS_WINDOW_S, WARMUP_S + 2 * RSS_WINDOW_S)),
      );
      const rssEnd = rss.map((xs) => median(xs.slice(-RSS_WINDOW_S)));
      const lastReady = readyz.slice(-2).map((j) => j.data);
      const maxBehind = Math.max(
        0,
        ...readyz.flatMap((j) =>
          ((j.data as { sources?: Array<{ secondsBehind: number | null }> })?.sources ?? []).map(
            (s) => s.secondsBehind ?? 0,
          ),
        ),
      );
      console.log(
        [
          `soak: ${SOAK_S} s after ${WARMUP_S} s warm-up, 2 API processes × ${CLIENTS} clients, simulator ${SIM_RATE} ops/s (exit ${simExit})`,
          `  requests ${measured.length} (${JSON.stringify(byKind)}), ${rps.toFixed(0)} req/s, p50 ${percentile(
            measured.map((a) => a.ms),
            50,
          ).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
          `  errors ${errors.length + failures.length}, expected 404s ${expected404}`,
          `  after a full GC: RSS kB ${gcBegin.map((x) => x.rssKb).join(", ")} -> ${gcEnd.map((x) => x.rssKb).join(", ")}` +
            ` (growth ${gcBegin.map((b, i) => `${(((gcEnd[i].rssKb - b.rssKb) / b.rssKb) * 100).toFixed(1)} %`).join(", ")}),` +
            ` heap used kB ${gcBegin.map((x) => x.heapUsedKb.toFixed(0)).join(", ")} -> ${gcEnd.map((x) => x.heapUsedKb.toFixed(0)).join(", ")}`,
          `  raw RSS kB start ${rssStart.map((x) => x.toFixed(0)).join(", ")} end ${rssEnd.map((x) => x.toFixed(0)).join(", ")}` +
            ` (growth ${rssStart.map((s, i) => `${(((rssEnd[i] - s) / s) * 100).toFixed(1)} %`).join(", ")})`,
          `  RSS MB every 5 s: ${rss
            .map((xs) =>
              xs
                .filter((_, j) => j % 5 === 0)
                .map((x) => (x / 1024).toFixed(0))
                .join(" "),
            )
            .join(" | ")}`,
          `  simulated names indexed ${registeredAt.size}, record versions ${[...versionsOf.values()].reduce((n, l) => n + l.length, 0)}; traced answers ${traced} (${withRecord} with a record value), stale ${staleAnswers}, max staleness ${maxStaleMs.toFixed(0)} ms`,
          `  /readyz max secondsBehind ${maxBehind}; last: ${JSON.stringify(lastReady)}`,
        ].join("\n"),
      );

      expect(failures).toEqual([]);
      expect(errors.slice(0, 5)).toEqual([]);
      // Flat, as the issue words it: each process's raw RSS (VmRSS, sampled every second; the median
      // of the last 10 s against the median of the second 10 s after the warm-up) grew less than 10 %.
      // The mean of 5 s was moved past 10 % by one or two samples high in a GC sawtooth when the
      // whole suite loaded both cores (11.8 % once, while the same run's post-GC RSS was flat).
      // Also what it retains after a full GC: the V8 heap in use (a leak of JS objects) less than
      // 10 %, and the RSS then (a native leak: buffers, sockets) less than 20 % (after a full GC
      // the RSS keeps what V8 and malloc hold on to: new space grown under load, arenas).
      expect(gcBegin).toHaveLength(apis.length);
      for (let i = 0; i < apis.length; i++) {
        expect(rss[i].length).toBeGreaterThanOrEqual(WARMUP_S + 3 * RSS_WINDOW_S);
        expect(rssEnd[i]).toBeLessThan(rssStart[i] * 1.1);
        expect(gcEnd[i].heapUsedKb).toBeLessThan(gcBegin[i].heapUsedKb * 1.1);
        expect(gcEnd[i].rssKb).toBeLessThan(gcBegin[i].rssKb * 1.2);
      }
      // The simulator changed names and the load saw them.
      expect(registeredAt.size).toBeGreaterThan(10);
      expect(traced).toBeGreaterThan(100);
      expect(withRecord).toBeGreaterThan(10);
      expect(maxStaleMs).toBeLessThan(FRESH_MS);
      for (const d of lastReady)
        expect(d).toMatchObject({ status: "ready", store: "up", redis: "up", channel: "up" });
      expect(crawler.proc.exitCode).toBeNull();
    },
    (WARMUP_S + SOAK_S) * 1000 + 60_000,
  );
});
