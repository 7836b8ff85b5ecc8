import { writeFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { startChild, stopChild } from "./child-server.js";
import type { NpmStart } from "./npm-start.js";

/**
 * The resolve bench's measure (bench/resolve.bench.ts) on any store: each v1 endpoint's warm
 * rate over a hot set of names (one pass over every distinct query first), as a ratio to a bare
 * Fastify route answering a resolve body of the same size, measured in the same minutes. The
 * timed runs are cut in slices taken in turns over the endpoints, so that the machine's drifting
 * load weighs on all alike. The scale bench runs it on the big store and on a reference store of
 * 100,000 domains, and prints one ratio against the other.
 */
export interface ServingRatio {
  label: "resolve" | "deep-resolve" | "reverse-resolve";
  rps: number;
  /** rps ÷ the bare route's rps. */
  ratio: number;
  p99: number;
  /** The API process's CPU (user + system) per request, µs. */
  cpuPerRequest: number;
  errors: number;
}

const V1 = "/svc/api/v1";
const CONNECTIONS = 50;
const ROUNDS = 5;

/** One autocannon run against a server (timed, or `amount` requests), with the server's CPU around it. */
export interface Slice {
  requests: number;
  seconds: number;
  /** autocannon's per-second average (a timed run's rate). */
  average: number;
  p50: number;
  p99: number;
  /** The server's CPU (µs) during the run. */
  cpu: number;
  non2xx: number;
  /** Connection errors, timeouts and 5xx answers (a 404 of an absent name is an answer). */
  errors: number;
}

/** Keep-alive load, 50 connections, over `paths` in turn: `seconds` long, or `amount` requests. */
export async function loadRun(
  port: number,
  paths: readonly string[],
  headers: Record<string, string>,
  cpu: () => Promise<number>,
  opts: { seconds?: number; amount?: number },
): Promise<Slice> {
  let i = 0;
  const cpu0 = await cpu();
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    ...(opts.amount === undefined ? { duration: opts.seconds } : { amount: opts.amount }),
    headers,
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
  return {
    requests: r.requests.total,
    seconds: r.duration,
    average: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpu: (await cpu()) - cpu0,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts + (r["5xx"] ?? 0),
  };
}

/**
 * Warm ratios to the bare route of the three endpoints on a running API (`api`), over `names`
 * (about nine in ten indexed) and `addresses` (wallets with a reverse record). `seconds` of timed
 * load per endpoint in all.
 */
export async function servingRatios(
  api: NpmStart,
  names: readonly string[],
  addresses: readonly string[],
  workDir: string,
  seconds: number,
): Promise<ServingRatio[]> {
  const headers = { "api-key": api.demoKey };
  const enc = encodeURIComponent;
  const cases = [
    { label: "resolve" as const, paths: names.map((n) => `${V1}/resolve?domain=${enc(n)}`) },
    { label: "deep-resolve" as const, paths: names.map((n) => `${V1}/deep-resolve?domain=${enc(n)}`) },
    {
      label: "reverse-resolve" as const,
      paths: addresses.map((a) => `${V1}/reverse-resolve?walletAddress=${a}`),
    },
  ];
  const sample = await fetch(`http://127.0.0.1:${api.port}${cases[0].paths[0]}`, { headers });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`sample resolve answered ${sample.status}: ${body}`);
  const bodyFile = join(workDir, "bare.json");
  writeFileSync(bodyFile, body);
  const bare = await startChild("bare-server.ts", [bodyFile]);
  const bareCpu = () =>
    new Promise<number>((resolve) => {
      bare.child.once("message", (m) => resolve((m as { cpu: number }).cpu));
      bare.child.send("cpu");
    });
  try {
    // Warm-up: every distinct query once (the first pass is what a cold cache costs, not timed here).
    for (const c of cases) await loadRun(api.port, c.paths, headers, api.cpu, { amount: c.paths.length });
    const all = [
      { label: "bare" as const, port: bare.port, paths: ["/bare"], cpu: bareCpu },
      ...cases.map((c) => ({ ...c, port: api.port, cpu: api.cpu })),
    ];
    const slices = new Map<string, Slice[]>(all.map((c) => [c.label, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const c of all)
        slices.get(c.label)?.push(
          await loadRun(c.port, c.paths, headers, c.cpu, {
            seconds: Math.max(1, Math.round(seconds / ROUNDS)),
          }),
        );
    const total = (label: string) => {
      const s = slices.get(label) ?? [];
      const requests = s.reduce((n, x) => n + x.requests, 0);
      return {
        rps:
          requests /
          Math.max(
            1e-3,
            s.reduce((n, x) => n + x.seconds, 0),
          ),
        p99: Math.max(...s.map((x) => x.p99)),
        cpuPerRequest: s.reduce((n, x) => n + x.cpu, 0) / Math.max(1, requests),
        errors: s.reduce((n, x) => n + x.errors, 0),
      };
    };
    const base = total("bare").rps;
    return cases.map((c) => {
      const t = total(c.label);
      return { label: c.label, ...t, ratio: t.rps / base };
    });
  } finally {
    await stopChild(bare.child);
  }
}
