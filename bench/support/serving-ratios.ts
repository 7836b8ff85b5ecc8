import { writeFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { startChild, stopChild } from "./child-server.js";
import type { NpmStart } from "./npm-start.js";

/**
 * The resolve bench's measure (bench/resolve.bench.ts) on any store: each v1 endpoint's warm
 * rate over a hot set of names (one pass over every distinct query first), as a ratio to a bare
 * Fastify route answering a resolve body of the same size, measured in the same minutes: once with
 * Fastify's own headers (`ratio`), once with the sampled answer's header fields too, the same
 * bytes on the wire (`ratioSameHeaders`). The
 * timed runs are cut in slices taken in turns over the endpoints, so that the machine's drifting
 * load weighs on all alike. The scale bench runs it on the big store and on a reference store of
 * 100,000 domains, and prints one ratio against the other.
 */
export interface ServingRatio {
  label: "resolve" | "deep-resolve" | "reverse-resolve";
  rps: number;
  /** rps ÷ the bare route's rps (the same body, Fastify's own headers). */
  ratio: number;
  /** rps ÷ the rps of the bare route sending the same body and the same header fields. */
  ratioSameHeaders: number;
  /** The bare routes' rates: body alone, and body with the answer's header fields. */
  bareRps: number;
  bareSameHeadersRps: number;
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

/** One API to measure: its running process, the names (about nine in ten indexed) and wallets to ask. */
export interface ServingTarget {
  name: string;
  api: NpmStart;
  names: readonly string[];
  addresses: readonly string[];
}

/**
 * Warm ratios to the bare route of the three endpoints of each target (the big store and the
 * reference store run at once), every timed slice of every endpoint of every target and of the
 * bare route taken in turns, so that the machine's drifting load weighs on all alike: the
 * targets' ratios are comparable with each other. `seconds` of timed load per endpoint in all.
 */
export async function servingRatios(
  targets: readonly ServingTarget[],
  workDir: string,
  seconds: number,
): Promise<Map<string, ServingRatio[]>> {
  const enc = encodeURIComponent;
  const casesOf = (t: ServingTarget) => {
    const headers = { "api-key": t.api.demoKey };
    const at = { port: t.api.port, cpu: t.api.cpu, headers, target: t.name };
    return [
      { ...at, label: "resolve" as const, paths: t.names.map((n) => `${V1}/resolve?domain=${enc(n)}`) },
      {
        ...at,
        label: "deep-resolve" as const,
        paths: t.names.map((n) => `${V1}/deep-resolve?domain=${enc(n)}`),
      },
      {
        ...at,
        label: "reverse-resolve" as const,
        paths: t.addresses.map((a) => `${V1}/reverse-resolve?walletAddress=${a}`),
      },
    ];
  };
  const cases = targets.flatMap(casesOf);
  const first = cases[0];
  if (!first) return new Map();
  const sample = await fetch(`http://127.0.0.1:${first.port}${first.paths[0]}`, { headers: first.headers });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`sample resolve answered ${sample.status}: ${body}`);
  const bodyFile = join(workDir, "bare.json");
  writeFileSync(bodyFile, body);
  // The answer's header fields, but those node writes itself for any answer.
  const own = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);
  const headersFile = join(workDir, "bare-headers.json");
  writeFileSync(
    headersFile,
    JSON.stringify(Object.fromEntries([...sample.headers].filter(([k]) => !own.has(k.toLowerCase())))),
  );
  const bare = await startChild("bare-server.ts", [bodyFile, headersFile]);
  const bareCpu = () =>
    new Promise<number>((resolve) => {
      bare.child.once("message", (m) => resolve((m as { cpu: number }).cpu));
      bare.child.send("cpu");
    });
  try {
    // Warm-up: every distinct query once (the first pass is what a cold cache costs, not timed here).
    for (const c of cases) await loadRun(c.port, c.paths, c.headers, c.cpu, { amount: c.paths.length });
    const all = [
      { target: "", label: "bare", port: bare.port, paths: ["/bare"], cpu: bareCpu, headers: {} },
      { target: "", label: "bare", port: bare.port, paths: ["/bare-headers"], cpu: bareCpu, headers: {} },
      ...cases,
    ];
    const slices = all.map(() => [] as Slice[]);
    for (let round = 0; round < ROUNDS; round++)
      for (const [i, c] of all.entries())
        slices[i]?.push(
          await loadRun(c.port, c.paths, c.headers, c.cpu, {
            seconds: Math.max(1, Math.round(seconds / ROUNDS)),
          }),
        );
    const total = (s: Slice[]) => {
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
    const base = total(slices[0] ?? []).rps;
    const sameHeaders = total(slices[1] ?? []).rps;
    const out = new Map<string, ServingRatio[]>(targets.map((t) => [t.name, []]));
    cases.forEach((c, i) => {
      const t = total(slices[i + 2] ?? []);
      out.get(c.target)?.push({
        label: c.label,
        ...t,
        ratio: t.rps / base,
        ratioSameHeaders: t.rps / sameHeaders,
        bareRps: base,
        bareSameHeadersRps: sameHeaders,
      });
    });
    return out;
  } finally {
    await stopChild(bare.child);
  }
}
