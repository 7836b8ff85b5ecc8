import cluster, { type Worker } from "node:cluster";
import { createSocket } from "node:dgram";
import { UDP_RECV_BUFFER } from "../dns/dns-server.js";
import { shareUdpSocket } from "../dns/udp-batch.js";
import { type AddressInfo, createServer, isIPv6 } from "node:net";
import { availableParallelism } from "node:os";
import type { Logger } from "pino";
import type { Config } from "../config/config.schema.js";
import type { DnsRole } from "../dns/dns-role.js";

/** The message a DNS worker sends once its ports are open (dns-worker.command.ts). */
export interface DnsWorkerReady {
  type: "omniname-dns-ready";
  host: string;
  port: number;
  tlsPort: number | null;
}

/** The dns role run by several processes sharing its ports; `pids` lists the live workers. */
export interface DnsCluster extends DnsRole {
  pids(): number[];
}

/** DNS_WORKERS as a count: 0 is one per core. */
export function dnsWorkerCount(config: Pick<Config, "dnsWorkers">): number {
  return config.dnsWorkers === 0 ? availableParallelism() : config.dnsWorkers;
}

/** A port free for TCP and UDP on `host` now (the system's choice), for DNS_PORT=0. */
async function freeDnsPort(host: string, udp: boolean): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const tcp = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen({ host, port: 0 }, () => resolve((tcp.address() as AddressInfo).port));
    });
    const udpFree =
      !udp ||
      (await new Promise<boolean>((resolve) => {
        const s = createSocket(isIPv6(host) ? "udp6" : "udp4");
        s.once("error", () => resolve(false));
        s.bind({ address: host, port }, () => s.close(() => resolve(true)));
      }));
    await new Promise<void>((r) => tcp.close(() => r()));
    if (udpFree || attempt >= 20) return port;
  }
}

/** DNS_PORT and DNS_TLS_PORT as numbers every worker asks for (0 resolved to a free port). */
async function fixedPorts(
  config: Pick<Config, "dnsHost" | "dnsPort" | "dnsTlsPort" | "tlsCertFile">,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    DNS_PORT: String(config.dnsPort === 0 ? await freeDnsPort(config.dnsHost, true) : config.dnsPort),
  };
  if (config.tlsCertFile !== undefined)
    env.DNS_TLS_PORT = String(
      config.dnsTlsPort === 0 ? await freeDnsPort(config.dnsHost, false) : config.dnsTlsPort,
    );
  return env;
}

/** Where a worker finds the UDP socket its primary bound: the stdio slot after the IPC channel. */
const WORKER_UDP_FD = 4;

/** A worker's `--udp-fd N` (dns-worker.command.ts): the inherited UDP socket, or undefined. */
export function udpFdOf(argv: readonly string[]): number | undefined {
  const i = argv.indexOf("--udp-fd");
  const fd = i < 0 ? Number.NaN : Number(argv[i + 1]);
  return Number.isInteger(fd) && fd > 2 ? fd : undefined;
}

/** A worker that dies sooner than this after its start is restarted after a growing delay. */
const EARLY_DEATH_MS = 5_000;
const MAX_RESTART_DELAY_MS = 10_000;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;

function isReady(m: unknown): m is DnsWorkerReady {
  return typeof m === "object" && m !== null && (m as { type?: unknown }).type === "omniname-dns-ready";
}

/** Forks one worker and resolves with its ports once they are open; rejects if it dies first. */
function forkReady(env: Record<string, string>): { worker: Worker; ready: Promise<DnsWorkerReady> } {
  const worker = cluster.fork(env);
  const ready = new Promise<DnsWorkerReady>((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.kill("SIGKILL");
      reject(new Error(`dns worker ${worker.process.pid} not ready in ${READY_TIMEOUT_MS / 1000} s`));
    }, READY_TIMEOUT_MS);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(
        new Error(`dns worker exited (${signal ?? `code ${code}`}) before it was ready: see its error above`),
      );
    };
    worker.once("exit", onExit);
    worker.on("message", (m: unknown) => {
      if (!isReady(m)) return;
      clearTimeout(timer);
      worker.off("exit", onExit);
      resolve(m);
    });
  });
  return { worker, ready };
}

/**
 * The `dns` role over `count` processes (node:cluster), each a full server (`omniname dns-worker`:
 * its own store connections, read caches kept exact by the commit watch or the change channel, its
 * own answer cache). UDP: this process binds the socket once and every worker reads it, the
 * datagrams going to whichever is free: through the batched addon (udp-batch.ts), inherited at
 * WORKER_UDP_FD; with DNS_UDP_BATCH=false (or no addon) node:dgram, shared by node:cluster. TCP and DoT: every worker accepts on
 * the shared listening socket (SCHED_NONE), so no connection passes through this process, which
 * may be busy crawling or serving the API. A worker that dies is forked again; when this process dies, even by
 * SIGKILL, the workers' IPC channel closes and Node's cluster ends them (no orphan).
 *
 * @example const dns = await startDnsCluster(config, logger, 2); // then dns.port, dns.close()
 */
export async function startDnsCluster(
  config: Pick<Config, "dnsHost" | "dnsPort" | "dnsTlsPort" | "tlsCertFile" | "dnsUdpBatch">,
  logger: Logger,
  count: number,
): Promise<DnsCluster> {
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  const workers = new Set<Worker>();
  let closing = false;
  let restartDelay = 0;
  // Not unref'd: with OMNINAME_ROLES=dns and every worker dead, this timer is what keeps the
  // primary alive until the next worker is up. Cleared on close.
  const restarts = new Set<NodeJS.Timeout>();

  // Every worker asks for the same port numbers: node:cluster shares a listening socket between
  // workers that ask for the same address and port, and keeps it while one of them lives (after a
  // total loss the next workers bind the same numbers again). Port 0 would be keyed by the order of
  // listens and get a new port after such a loss, so it is resolved here first.
  const env = await fixedPorts(config);
  // UDP through the batched addon: one socket bound here, inherited by every worker at WORKER_UDP_FD
  // (its stdio slot), all of them reading it (shareUdpSocket). Else each worker listens with
  // node:dgram and node:cluster shares one socket the same way.
  const shared = shareUdpSocket(config.dnsUdpBatch, config.dnsHost, Number(env.DNS_PORT), UDP_RECV_BUFFER);
  // The same program and runtime flags (tsx in tests), the worker's command instead of ours.
  cluster.setupPrimary({
    exec: process.argv[1],
    args: shared === null ? ["dns-worker"] : ["dns-worker", "--udp-fd", String(WORKER_UDP_FD)],
    ...(shared === null ? {} : { stdio: [0, 1, 2, "ipc", shared.fd] }),
  });
  // NOTIFY (DNS_NOTIFY) comes from one worker only, else each secondary would get one per worker:
  // the first worker, or the next one forked after it died.
  let notifier: Worker | null = null;
  const forkOne = () => {
    const f = forkReady(notifier === null ? env : { ...env, DNS_NOTIFY: "" });
    if (notifier === null) notifier = f.worker;
    f.worker.once("exit", () => {
      if (notifier === f.worker) notifier = null;
    });
    return f;
  };
  const first = forkOne();
  workers.add(first.worker);
  const ports = await first.ready.catch((e: unknown) => {
    workers.clear();
    shared?.close();
    throw e;
  });

  const supervise = (worker: Worker, startedAt: number) => {
    worker.once("exit", (code, signal) => {
      workers.delete(worker);
      if (closing) return;
      const early = Date.now() - startedAt < EARLY_DEATH_MS;
      restartDelay = early ? Math.min(MAX_RESTART_DELAY_MS, Math.max(100, restartDelay * 2)) : 0;
      logger.warn(
        { pid: worker.process.pid, code, signal, restartInMs: restartDelay },
        "dns worker died: starting another",
      );
      const timer = setTimeout(() => {
        restarts.delete(timer);
        spawn();
      }, restartDelay);
      restarts.add(timer);
    });
  };
  const spawn = () => {
    if (closing) return;
    const next = forkOne();
    workers.add(next.worker);
    supervise(next.worker, Date.now());
    next.ready.then(
      (r) => logger.info({ pid: next.worker.process.pid, port: r.port }, "dns worker ready"),
      (e: unknown) => logger.error({ err: e }, "dns worker failed to start"),
    );
    return next.ready;
  };

  supervise(first.worker, Date.now());
  const rest: Promise<DnsWorkerReady>[] = [];
  for (let i = 1; i < count; i++) {
    const r = spawn();
    if (r) rest.push(r);
  }
  const close = async () => {
    closing = true;
    for (const t of restarts) clearTimeout(t);
    restarts.clear();
    await Promise.all(
      [...workers].map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            // A worker that does not finish its stop in time is killed: it must not keep the
            // primary (whose IPC channel to it keeps the process alive) from exiting.
            const force = setTimeout(() => w.process.kill("SIGKILL"), STOP_TIMEOUT_MS);
            w.once("exit", () => {
              clearTimeout(force);
              resolve();
            });
            // The signal itself, not worker.kill(): that cuts the IPC channel first, and a worker whose
            // channel is cut exits at once (node:cluster), without closing its sockets and store.
            w.process.kill("SIGTERM");
          }),
      ),
    );
    shared?.close();
  };
  await Promise.all(rest).catch(async (e: unknown) => {
    await close();
    throw e;
  });
  return {
    host: ports.host,
    port: ports.port,
    tlsPort: ports.tlsPort,
    pids: () => [...workers].map((w) => w.process.pid ?? -1),
    close,
  };
}
