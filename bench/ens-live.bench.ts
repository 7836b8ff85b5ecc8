import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, encodeFunctionData, http, parseAbi, toHex } from "viem";
import { namehash, packetToBytes } from "viem/ens";
import { createApiKey } from "../src/accounts/api-keys.js";
import { startDevnet } from "../src/devnet/devnet.js";
import { fixtureWorld, NOTABLE } from "../src/devnet/fixtures.js";
import { sourcesFromManifest } from "../src/devnet/manifest.js";
import { LIVE_RECORDS } from "../src/resolution/ens-live.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { crawlToHead } from "../test/crawler/crawler-harness.js";
import { cpuOf, startChild, stopChild } from "./support/child-server.js";
import { loadRun } from "./support/serving-ratios.js";

/**
 * ENS names answered live (docs/ens-offchain.md) against indexed ones, on the devnet (its
 * OffchainResolver and signing CCIP-Read gateway, in this process), the app in a child process as
 * `npm start` wires it (SQLite, live lookups on the devnet's chain).
 *
 * Rows:
 * - warm: resolve of the offchain names (offchain.eth, alice/bob.wild.eth) with their answers in
 *   the cache, as a ratio to resolve of three indexed ENS names (aim >= 0.9); keep-alive load,
 *   50 connections, in slices taken in turns (ROUNDS) so the machine's drifting load weighs on both.
 * - cold: one resolve of offchain.eth with the cache off (every request a lookup: 15 records in
 *   parallel, each an eth_call, an OffchainLookup, a gateway round trip and the callback), one
 *   request at a time, against the bare thing: one `resolve(name, addr(node))` through viem's own
 *   CCIP-Read (eth_call + gateway + callback), and as many of those at once as a lookup asks
 *   records (what the devnet's chain and gateway cost), measured in the same run.
 * Also printed: the API processes' peak RSS (VmHWM) and the load average. BENCH_SECONDS shrinks it.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 5;
const COLD = 30;
const V1 = "/svc/api/v1";

function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? Number.NaN;

const dir = mkdtempSync(join(tmpdir(), "omniname-ens-live-bench-"));
const children: ChildProcess[] = [];
const devnet = await startDevnet({
  dataDir: dir,
  persist: false,
  blockTime: 0,
  logs: false,
  networks: ["ETHEREUM"],
  basePort: 20_000 + Math.floor(Math.random() * 20_000),
});
try {
  const file = join(dir, "bench.db");
  const pepper = randomBytes(16).toString("hex");
  const store = createSqliteStore(file);
  await store.migrate();
  await crawlToHead(store, sourcesFromManifest(devnet.manifest));
  const project = await store.projects.createProject({ name: "bench" });
  await store.accounts
    .updateTable("projects")
    .set({ plan: "internal" })
    .where("id", "=", project.id)
    .execute();
  const { key } = await createApiKey(store, pepper, project.id, "bench");
  await store.close();
  const headers = { "api-key": key };

  const warm = await startChild("ens-live-server.ts", [file, pepper, dir, "3600000"]);
  const cold = await startChild("ens-live-server.ts", [file, pepper, dir, "0"]);
  children.push(warm.child, cold.child);
  const ask = async (port: number, name: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${V1}/resolve?domain=${encodeURIComponent(name)}`, {
      headers,
    });
    return { status: res.status, body: (await res.json()) as { data?: { info: { tags: string[] } } } };
  };

  const offchain = [NOTABLE.ensOffchain, ...NOTABLE.ensWildcardSubnames];
  for (const n of offchain) {
    const a = await ask(warm.port, n);
    if (a.status !== 200) throw new Error(`${n} answered ${a.status}`);
  }
  // Three indexed ENS names that answer 200 (not expired), as many as the offchain ones.
  const indexed: string[] = [];
  for (const d of fixtureWorld().domains) {
    if (indexed.length === offchain.length) break;
    if (d.provider !== "NAMESPACE_C" || d.network !== "ETHEREUM") continue;
    const a = await ask(warm.port, d.name);
    if (a.status === 200 && !a.body.data!.info.tags.some((t) => t === "offchain" || t === "expired"))
      indexed.push(d.name);
  }
  const pathsOf = (names: string[]) => names.map((n) => `${V1}/resolve?domain=${encodeURIComponent(n)}`);
  const cpu = () => cpuOf(warm.child);
  // One pass of each first (the read caches and the JIT warm), then the timed slices in turns.
  await loadRun(warm.port, pathsOf(indexed), headers, cpu, { amount: 2_000 });
  await loadRun(warm.port, pathsOf(offchain), headers, cpu, { amount: 2_000 });
  const totals = { indexed: { req: 0, s: 0, cpu: 0, err: 0 }, offchain: { req: 0, s: 0, cpu: 0, err: 0 } };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [label, names] of [
      ["indexed", indexed],
      ["offchain", offchain],
    ] as const) {
      const s = await loadRun(warm.port, pathsOf(names), headers, cpu, { seconds: SECONDS / ROUNDS });
      const t = totals[label];
      t.req += s.requests;
      t.s += s.seconds;
      t.cpu += s.cpu;
      t.err += s.errors + s.non2xx;
    }
  }
  const rps = (t: { req: number; s: number }) => t.req / t.s;
  const ratio = rps(totals.offchain) / rps(totals.indexed);

  // Cold: every request a lookup (the cache off), one at a time; the bare CCIP-Read call beside it.
  const coldMs: number[] = [];
  for (let i = 0; i < COLD; i++) {
    const t0 = performance.now();
    const a = await ask(cold.port, NOTABLE.ensOffchain);
    coldMs.push(performance.now() - t0);
    if (a.status !== 200) throw new Error(`cold lookup answered ${a.status}`);
  }
  const client = createPublicClient({ transport: http(devnet.manifest.networks.ETHEREUM!.rpcUrl) });
  const abi = parseAbi([
    "function resolve(bytes name, bytes data) view returns (bytes)",
    "function addr(bytes32 node) view returns (address)",
  ]);
  const data = encodeFunctionData({
    abi,
    functionName: "resolve",
    args: [
      toHex(packetToBytes(NOTABLE.ensOffchain)),
      encodeFunctionData({ abi, functionName: "addr", args: [namehash(NOTABLE.ensOffchain)] }),
    ],
  });
  const bareCall = async () => {
    const r = await client.call({ to: devnet.manifest.ensOffchain!.resolver as `0x${string}`, data });
    if (!r.data || r.data === "0x") throw new Error("the bare CCIP-Read call answered nothing");
  };
  const bareMs: number[] = [];
  const bare15Ms: number[] = [];
  for (let i = 0; i < COLD; i++) {
    let t0 = performance.now();
    await bareCall();
    bareMs.push(performance.now() - t0);
    // As many as a lookup asks (LIVE_RECORDS), at once: what the devnet's chain and gateway cost.
    t0 = performance.now();
    await Promise.all(LIVE_RECORDS.map(() => bareCall()));
    bare15Ms.push(performance.now() - t0);
  }

  const la = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  console.log(`load average ${la} (${cpus().length} cores)`);
  console.log("row                                  req/s   ratio  CPU µs/req  errors");
  for (const [label, t] of Object.entries(totals))
    console.log(
      `resolve, ${label.padEnd(8)} ${label === "offchain" ? "(warm cache)" : "(the index) "}   ${rps(t).toFixed(0).padStart(6)}  ${(rps(t) / rps(totals.indexed)).toFixed(2).padStart(6)}  ${(t.cpu / Math.max(1, t.req)).toFixed(0).padStart(10)}  ${t.err}`,
    );
  console.log(`warm offchain ÷ indexed: ${ratio.toFixed(2)} (aim >= 0.9)`);
  const ms = (xs: number[]) => `p50 ${median(xs).toFixed(1)} ms, p90 ${p90(xs).toFixed(1)} ms`;
  console.log(`cold lookup through the API (${LIVE_RECORDS.length} records, cache off): ${ms(coldMs)}`);
  console.log(`bare eth_call + gateway + callback, one record (viem): ${ms(bareMs)}`);
  console.log(`the same, ${LIVE_RECORDS.length} at once: ${ms(bare15Ms)}`);
  console.log(
    `cold ÷ one bare call: ${(median(coldMs) / median(bareMs)).toFixed(2)}; cold ÷ ${LIVE_RECORDS.length} bare calls at once: ${(median(coldMs) / median(bare15Ms)).toFixed(2)}`,
  );
  console.log(
    `peak RSS: warm API ${peakRssMb(warm.child.pid).toFixed(0)} MB, cold API ${peakRssMb(cold.child.pid).toFixed(0)} MB, bench process ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  );
  if (process.env.BENCH_STRICT === "1" && ratio < 0.9) process.exitCode = 1;
} finally {
  for (const c of children) await stopChild(c);
  await devnet.stop();
  rmSync(dir, { recursive: true, force: true });
}
