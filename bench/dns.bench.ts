import { type ChildProcess, execFileSync, fork, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createUdpDnsClient } from "../src/dns/dns-client.testing.js";
import { buildTestQuery } from "../src/dns/dns.testing.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { childrenOf, cpuTicks } from "../test/helpers/processes.js";
import { makeTestCertificate } from "../test/helpers/tls-cert.js";
import { generateDnssecKeyPem, parseDnssecKeys } from "../src/dns/dnssec-keys.js";
import { DnssecSigner } from "../src/dns/dnssec-sign.js";
import { dnsperf as runDnsperf, latency } from "./support/dns-load.js";
import { dohOverHttp1, dohOverHttp2 } from "./support/doh-load.js";
import { type RunningRole, startRole } from "./support/omniname-role.js";
import { seedBulk } from "./support/seed-bulk.js";

/**
 * The authoritative server over UDP against NSD serving the same exported zones, in one run:
 * dnsperf (10 clients, 100 queries outstanding, BENCH_SECONDS each) on the same query file for
 * each, then the ratios. Twice: NSD with one server process against our server in one process,
 * and NSD with BENCH_DNS_WORKERS server processes (default: the cores) against the `dns` role as
 * `omniname start` runs it with DNS_WORKERS the same (node:cluster workers; UDP through the batched
 * addon, every worker reading the one socket the primary bound). Both also on node:dgram (DNS_UDP_BATCH=false), in
 * the same turns: the batched path's gain over the previous one, measured back to back.
 * Latency: p50 and p99 of 5,000 sequential queries measured by this process (dnsperf prints no
 * percentiles). Also: DoH throughput (GET /dns-query over TLS, HTTP/1.1 by autocannon and
 * HTTP/2 by a node:http2 client) of the API role, and the zone export of the bench world, its
 * time and peak RSS.
 *
 * Aim: the workers >= 1.0 × NSD with as many processes, p99 under 1 ms on loopback.
 * BENCH_DOMAINS (default 100,000) and BENCH_SECONDS (5) size the run.
 */
const DOMAINS = Number(process.env.BENCH_DOMAINS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WORKERS = Number(process.env.BENCH_DNS_WORKERS ?? availableParallelism());
const here = dirname(fileURLToPath(import.meta.url));
const dnsperf = (port: number, queryFile: string, dnssecOk = false, passes?: number) =>
  runDnsperf(SECONDS, port, queryFile, dnssecOk, passes);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The processes whose command line contains `marker` (from /proc). */
function processesWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const dir = mkdtempSync(join(tmpdir(), "omniname-dns-bench-"));
const children: ChildProcess[] = [];
const roles: RunningRole[] = [];
try {
  const file = join(dir, "bench.sqlite");
  const store = createSqliteStore(file);
  await store.migrate();
  const world = seedBulk(store, DOMAINS);
  await store.crawlerLog.setCheckpoint({
    sourceId: "bench",
    chainId: 1,
    blockNumber: DOMAINS,
    blockHash: "0x1",
    updatedAt: Date.now(),
    state: "live",
    error: null,
  });
  await store.close();

  const zonesDir = join(dir, "zones");
  const exported = JSON.parse(
    execFileSync(
      process.execPath,
      ["--import", "tsx", join(here, "support", "zone-export.ts"), file, zonesDir],
      { encoding: "utf8" },
    ),
  ) as {
    ms: number;
    maxRssMiB: number;
    zones: number;
    names: number;
    files: Array<{ tld: string; file: string }>;
  };
  console.log(
    `zone export: ${DOMAINS.toLocaleString("en-US")} domains -> ${exported.names.toLocaleString("en-US")} names in ${exported.zones} zones, ${(exported.ms / 1000).toFixed(1)} s, peak RSS ${exported.maxRssMiB} MiB`,
  );

  // The query file: a hot set of names, A and TXT, and one query in ten for an absent name.
  const lines: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const name = world.names[(i * 7919) % world.names.length];
    lines.push(i % 10 === 9 ? `absent${i}.wallet A` : `${name} ${i % 2 ? "A" : "TXT"}`);
  }
  const queryFile = join(dir, "queries.txt");
  writeFileSync(queryFile, `${lines.join("\n")}\n`);

  const startNsd = async (servers: number) => {
    const port = await freePort();
    const conf = [
      "server:",
      `  ip-address: 127.0.0.1@${port}`,
      '  username: ""',
      '  chroot: ""',
      '  database: ""',
      `  pidfile: "${join(dir, `nsd${servers}.pid`)}"`,
      `  xfrdfile: "${join(dir, `xfrd${servers}.state`)}"`,
      `  zonelistfile: "${join(dir, `zone${servers}.list`)}"`,
      `  logfile: "${join(dir, `nsd${servers}.log`)}"`,
      `  server-count: ${servers}`,
      "  minimal-responses: yes",
      "  rrl-ratelimit: 0",
      "remote-control:",
      "  control-enable: no",
      ...exported.files.flatMap((z) => ["zone:", `  name: ${z.tld}`, `  zonefile: "${z.file}"`]),
    ].join("\n");
    writeFileSync(join(dir, `nsd${servers}.conf`), `${conf}\n`);
    const nsd = spawn("nsd", ["-d", "-c", join(dir, `nsd${servers}.conf`)], { stdio: "ignore" });
    children.push(nsd);
    // Its server processes are forked from it with the same command line (the config's path).
    serverPids.set(port, () => processesWith(`nsd${servers}.conf`));
    return port;
  };
  /** The processes that answer on a port (NSD's main process and its servers; our workers). */
  const serverPids = new Map<number, () => number[]>();
  /** dnsperf, and the CPU time (µs) the server's processes used per query it answered. */
  const withCpu = (port: number) => {
    const pids = serverPids.get(port)?.() ?? [];
    const before = pids.map(cpuTicks);
    const r = dnsperf(port, queryFile);
    const used = pids.map((pid, i) => cpuTicks(pid) - before[i]);
    const total = used.reduce((a, b) => a + b, 0);
    // Each process's share of the CPU used: with a socket per worker the kernel hashes dnsperf's
    // 10 client sockets over the workers, so the split need not be even.
    const shares = used.map((u) => (u / Math.max(1, total)).toFixed(2)).join("/");
    return { ...r, cpuUs: (total * 10_000) / Math.max(1, r.qps * SECONDS), shares };
  };
  const nsdPort = await startNsd(1);
  const nsdNPort = await startNsd(WORKERS);

  // Ours as the dns role runs (with its answer cache), and once more without the cache, for the record.
  const startOurs = async (cache: boolean, dnssec = false, udpBatch = true) => {
    const child = fork(join(here, "support", "dns-server.ts"), [file], {
      execArgv: ["--import", "tsx"],
      stdio: "inherit",
      env: {
        ...process.env,
        BENCH_DNS_CACHE: cache ? "1" : "0",
        BENCH_DNSSEC: dnssec ? "1" : "0",
        BENCH_DNS_UDP_BATCH: udpBatch ? "1" : "0",
      },
    });
    children.push(child);
    return new Promise<number>((resolve, reject) => {
      child.once("message", (m) => {
        udpPaths.set((m as { port: number }).port, (m as { udpPath: string }).udpPath);
        portPids.set((m as { port: number }).port, child.pid ?? 0);
        serverPids.set((m as { port: number }).port, () => [child.pid ?? 0]);
        resolve((m as { port: number }).port);
      });
      child.once("exit", (code) => reject(new Error(`dns server exited with ${code}`)));
    });
  };
  const portPids = new Map<number, number>();
  const udpPaths = new Map<number, string>();
  /** dnsperf against one of our servers, and the server's CPU time per answered query (µs). */
  const measured = (port: number, dnssecOk = false) => {
    const pid = portPids.get(port)!;
    const before = cpuTicks(pid);
    const r = dnsperf(port, queryFile, dnssecOk);
    const cpuUs = ((cpuTicks(pid) - before) * 10_000) / Math.max(1, r.qps * SECONDS);
    return { ...r, cpuUs };
  };
  const ourPort = await startOurs(true);
  const dgramPort = await startOurs(true, false, false);
  const uncachedPort = await startOurs(false);
  // DNSSEC=true, asked with DO: the same server signing (with its answer cache, and without).
  const signedPort = await startOurs(true, true);
  const signedUncachedPort = await startOurs(false, true);
  // The dns role over WORKERS processes, as an operator runs it; and on node:dgram.
  const startWorkers = async (udpBatch: boolean) => {
    const role = await startRole(
      {
        ...process.env,
        LOG_LEVEL: "warn",
        OMNINAME_ROLES: "dns",
        DNS_WORKERS: String(WORKERS),
        DNS_UDP_BATCH: String(udpBatch),
        DNS_PORT: "0",
        DATABASE_URL: `sqlite:${file}`,
        DATA_DIR: dir,
      },
      /DNS \(UDP\+TCP\):\s+127\.0\.0\.1:(\d+)/,
    );
    roles.push(role);
    const port = Number(role.match[1]);
    serverPids.set(port, () => childrenOf(role.child.pid ?? 0, "dns-worker"));
    return { role, port };
  };
  const { role: cluster, port: workersPort } = await startWorkers(true);
  const { role: dgramCluster, port: dgramWorkersPort } = await startWorkers(false);
  // NSD is ready once it answers (it loads the zones first).
  for (const port of [nsdPort, nsdNPort])
    for (let ready = false; !ready; ) {
      const client = createUdpDnsClient("127.0.0.1", port);
      ready = await Promise.race([
        client.ask(buildTestQuery("wallet", "SOA", { id: 1 })).then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 500)),
      ]);
      client.close();
    }

  // Warm each (our first pass reads SQLite pages from disk), then measure, NSD and ours in turns.
  // Whole passes over the file, not seconds: a slower server would otherwise be measured colder.
  for (const port of [ourPort, dgramPort, uncachedPort, workersPort, dgramWorkersPort, nsdPort, nsdNPort])
    dnsperf(port, queryFile, false, 1);
  for (const port of [signedPort, signedUncachedPort]) dnsperf(port, queryFile, true, 1);
  // Each worker has its own answer cache and sees only its share of the queries: after one pass a
  // worker holds about 1/WORKERS of them. Six more passes, each a dnsperf run of its own: with a
  // socket per worker (SO_REUSEPORT) the kernel sends each client socket to one worker, and
  // dnsperf sends a query line through the same client every pass, so only new client ports (a
  // new run) bring a query to the other worker. After them each worker holds ~98 % of the file.
  for (let i = 0; i < 6; i++)
    for (const port of [workersPort, dgramWorkersPort]) dnsperf(port, queryFile, false, 1);
  const nsdRun = withCpu(nsdPort);
  const ourRun = withCpu(ourPort);
  const dgramRun = withCpu(dgramPort);
  const nsdNRun = withCpu(nsdNPort);
  const workersRun = withCpu(workersPort);
  const dgramWorkersRun = withCpu(dgramWorkersPort);
  const uncachedRun = dnsperf(uncachedPort, queryFile);
  // Signed against unsigned, in turns, each with the server's CPU time per query.
  const cpuRuns = {
    unsigned: measured(ourPort),
    signed: measured(signedPort, true),
    unsignedUncached: measured(uncachedPort),
    signedUncached: measured(signedUncachedPort, true),
  };
  const nsdLat = await latency(nsdPort, world.names);
  const ourLat = await latency(ourPort, world.names);
  const dgramLat = await latency(dgramPort, world.names);
  const nsdNLat = await latency(nsdNPort, world.names);
  const workersLat = await latency(workersPort, world.names);
  const dgramWorkersLat = await latency(dgramWorkersPort, world.names);
  const uncachedLat = await latency(uncachedPort, world.names);
  const row = (
    label: string,
    r: ReturnType<typeof dnsperf> & { cpuUs?: number },
    l: typeof ourLat,
    ratio: number,
  ) =>
    `| ${label} | ${Math.round(r.qps).toLocaleString("en-US")} | ${r.lost} | ${r.avgMs.toFixed(2)} | ${l.p50.toFixed(2)} | ${l.p99.toFixed(2)} | ${ratio.toFixed(2)} | ${r.cpuUs?.toFixed(1) ?? "—"} |`;
  console.log(
    "\n| Server | queries/s | lost | avg ms (dnsperf) | p50 ms | p99 ms | ratio | server CPU µs/query |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  console.log(row("NSD 4 (1 server process)", nsdRun, nsdLat, 1));
  console.log(
    row(
      `omniname dns role, 1 process (UDP: ${udpPaths.get(ourPort)})`,
      ourRun,
      ourLat,
      ourRun.qps / nsdRun.qps,
    ),
  );
  console.log(row("omniname, 1 process, DNS_UDP_BATCH=false", dgramRun, dgramLat, dgramRun.qps / nsdRun.qps));
  console.log(
    row("omniname, 1 process, answer cache off", uncachedRun, uncachedLat, uncachedRun.qps / nsdRun.qps),
  );
  console.log(row(`NSD 4 (${WORKERS} server processes)`, nsdNRun, nsdNLat, 1));
  console.log(
    row(`omniname dns role, DNS_WORKERS=${WORKERS}`, workersRun, workersLat, workersRun.qps / nsdNRun.qps),
  );
  console.log(
    row(
      `omniname dns role, DNS_WORKERS=${WORKERS}, DNS_UDP_BATCH=false`,
      dgramWorkersRun,
      dgramWorkersLat,
      dgramWorkersRun.qps / nsdNRun.qps,
    ),
  );
  console.log(
    `\nDNS_WORKERS=${WORKERS}: ratio ${(workersRun.qps / nsdNRun.qps).toFixed(2)} (aim >= 1.0); p99 ${workersLat.p99.toFixed(2)} ms (aim < 1 ms); CPU µs a query: workers ${workersRun.cpuUs.toFixed(1)} (node:dgram ${dgramWorkersRun.cpuUs.toFixed(1)}, ratio ${(dgramWorkersRun.qps / nsdNRun.qps).toFixed(2)}), NSD ${nsdNRun.cpuUs.toFixed(1)}; CPU shares of the processes: workers ${workersRun.shares}, node:dgram ${dgramWorkersRun.shares}, NSD ${nsdNRun.shares}; one process: ratio ${(ourRun.qps / nsdRun.qps).toFixed(2)}; load average ${loadavg()[0].toFixed(1)}`,
  );
  console.log(
    "\n| DNSSEC (one process; dnsperf -D for the signed rows) | queries/s | server CPU µs/query | CPU ratio |",
  );
  console.log("|---|---|---|---|");
  const cpuRow = (label: string, r: (typeof cpuRuns)["signed"], base: (typeof cpuRuns)["signed"]) =>
    console.log(
      `| ${label} | ${Math.round(r.qps).toLocaleString("en-US")} | ${r.cpuUs.toFixed(1)} | ${(r.cpuUs / base.cpuUs).toFixed(2)} |`,
    );
  cpuRow("unsigned, answer cache", cpuRuns.unsigned, cpuRuns.unsigned);
  cpuRow("signed (DO), answer cache", cpuRuns.signed, cpuRuns.unsigned);
  cpuRow("unsigned, answer cache off", cpuRuns.unsignedUncached, cpuRuns.unsignedUncached);
  cpuRow(
    "signed (DO), answer cache off (signature cache on)",
    cpuRuns.signedUncached,
    cpuRuns.unsignedUncached,
  );
  // A signature made afresh (a name first asked, or a day old): CPU per signature, in process.
  const signer = new DnssecSigner(parseDnssecKeys(generateDnssecKeyPem(), "bench"), Date.now);
  const rdata = [Buffer.from([192, 0, 2, 1])];
  for (let i = 0; i < 500; i++)
    signer.sign("wallet", { owner: `warm${i}.wallet`, type: 1, ttl: 300, rdatas: rdata });
  const t0 = process.cpuUsage();
  const SIGNS = 5_000;
  for (let i = 0; i < SIGNS; i++)
    signer.sign("wallet", { owner: `n${i}.wallet`, type: 1, ttl: 300, rdatas: rdata });
  const used = process.cpuUsage(t0);
  console.log(
    `a fresh signature (ECDSA P-256, node:crypto): ${((used.user + used.system) / SIGNS).toFixed(1)} µs CPU each; load average ${loadavg()[0].toFixed(1)}`,
  );
  await Promise.all([cluster.stop(), dgramCluster.stop()]);

  // DoH: the API role over TLS (HTTP/2 and HTTP/1.1 by ALPN) on the same store.
  const cert = makeTestCertificate(dir);
  const api = await startRole(
    {
      ...process.env,
      LOG_LEVEL: "warn",
      OMNINAME_ROLES: "api",
      PORT: "0",
      DATABASE_URL: `sqlite:${file}`,
      DATA_DIR: dir,
      TLS_CERT_FILE: cert.certFile,
      TLS_KEY_FILE: cert.keyFile,
    },
    /omniname is up: (https:\/\/[^\s/]+)\/svc/,
  );
  roles.push(api);
  const origin = api.match[1];
  const dohPaths = lines.slice(0, 2_000).map((l) => {
    const [name, type] = l.split(" ");
    return `/dns-query?dns=${buildTestQuery(name, type, { id: 0 }).toString("base64url")}`;
  });
  // Warm (every path computed once, SQLite pages read, JIT) before either is measured.
  await dohOverHttp1(origin, dohPaths, SECONDS);
  await dohOverHttp2(origin, dohPaths, 1);
  const h2 = await dohOverHttp2(origin, dohPaths, SECONDS);
  const h1 = await dohOverHttp1(origin, dohPaths, SECONDS);
  console.log("\n| DoH (GET /dns-query, TLS, one API process) | requests/s | not 200 | p99 ms |");
  console.log("|---|---|---|---|");
  console.log(
    `| HTTP/2 (4 connections × 50 streams) | ${Math.round(h2.rps).toLocaleString("en-US")} | ${h2.errors} | ${h2.p99Ms.toFixed(2)} |`,
  );
  console.log(
    `| HTTP/1.1 (autocannon, 50 connections) | ${Math.round(h1.rps).toLocaleString("en-US")} | ${h1.errors} | ${h1.p99Ms.toFixed(2)} |`,
  );
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  await Promise.all(roles.map((r) => r.stop()));
  for (const c of children) {
    if (c.exitCode !== null) continue;
    if (c.connected) c.disconnect();
    else c.kill("SIGTERM");
  }
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
}
