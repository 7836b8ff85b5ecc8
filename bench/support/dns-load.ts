import { spawnSync } from "node:child_process";
import { createUdpDnsClient } from "../../src/dns/dns-client.testing.js";
import { buildTestQuery } from "../../src/dns/dns.testing.js";

// The DNS bench's load (bench/dns.bench.ts): dnsperf over a query file, and the latency of
// sequential queries.

/** dnsperf (10 clients, 100 outstanding) on 127.0.0.1:port for `seconds`, or `passes` over the file. */
export function dnsperf(
  seconds: number,
  port: number,
  queryFile: string,
  dnssecOk = false,
  /** Passes over the query file instead of BENCH_SECONDS: a warm-up of the same size for every server. */
  passes?: number,
): { qps: number; lost: number; avgMs: number } {
  const r = spawnSync(
    "dnsperf",
    [
      "-s",
      "127.0.0.1",
      "-p",
      String(port),
      "-d",
      queryFile,
      ...(passes === undefined ? ["-l", String(seconds)] : ["-n", String(passes)]),
      "-c",
      "10",
      "-q",
      "100",
      "-t",
      "2",
      // -D: the DO bit (EDNS), so a signing server signs.
      ...(dnssecOk ? ["-D"] : []),
    ],
    { encoding: "utf8" },
  );
  const out = r.stdout;
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const avg = Number(/Average Latency \(s\):\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  return { qps, lost, avgMs: avg * 1000 };
}

/** p50 and p99 (ms) of 5,000 sequential queries (EDNS, the world's names in turn) from one socket. */
export async function latency(port: number, names: string[]): Promise<{ p50: number; p99: number }> {
  const client = createUdpDnsClient("127.0.0.1", port);
  const samples: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const q = buildTestQuery(names[i % names.length], i % 2 ? "A" : "TXT", { id: i & 0xffff, udpSize: 1232 });
    const t = performance.now();
    await client.ask(q);
    samples.push(performance.now() - t);
  }
  client.close();
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)], p99: samples[Math.floor(samples.length * 0.99)] };
}
