import cluster, { type Worker } from "node:cluster";
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

/** A worker that dies sooner than this after its start is restarted after a growing delay. */
const EARLY_DEATH_MS = 5_000;
const MAX_RESTART_DELAY_MS = 10_000;
const READY_TIMEOUT_MS = 120_000;

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
 * own answer cache). UDP: the primary binds the socket once and every worker reads the same
 * socket, the kernel handing each datagram to one of them. TCP and DoT: every worker accepts on
 * the shared listening socket (SCHED_NONE), so no connection passes through this process, which
 * may be busy crawling or serving the API. A worker that dies is forked again; when this process dies, even by
 * SIGKILL, the workers' IPC channel closes and Node's cluster ends them (no orphan).
 *
 * @example const dns = await startDnsCluster(logger, 2); // then dns.port, dns.close()
 */
export async function startDnsCluster(logger: Logger, count: number): Promise<DnsCluster> {
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  // The same program and runtime flags (tsx in tests), the worker's command instead of ours.
  cluster.setupPrimary({ exec: process.argv[1], args: ["dns-worker"] });
  const workers = new Set<Worker>();
  let closing = false;
  let restartDelay = 0;
  // Not unref'd: with OMNINAME_ROLES=dns and every worker dead, this timer is what keeps the
  // primary alive until the next worker is up. Cleared on close.
  const restarts = new Set<NodeJS.Timeout>();

  const first = forkReady({});
  workers.add(first.worker);
  const ports = await first.ready.catch((e: unknown) => {
    workers.clear();
    throw e;
  });
  // Every worker gets the same settings, DNS_PORT=0 included: node:cluster keys a shared listening
  // socket by the address and port asked for and, for port 0, by the order of the worker's
  // listens (TCP, then DoT), so each worker's TCP joins the first one's chosen port, and its UDP
  // socket, bound to that port number, joins the first one's too.
  let env: Record<string, string> = {};
  // Once every worker is gone, node:cluster has closed the shared sockets: the next workers would
  // get new ones, and with port 0 a new port. From then on they ask for the ports in use by number.
  const samePorts: Record<string, string> = { DNS_PORT: String(ports.port) };
  if (ports.tlsPort !== null) samePorts.DNS_TLS_PORT = String(ports.tlsPort);

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
    if (workers.size === 0) env = samePorts;
    const next = forkReady(env);
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
            w.once("exit", () => resolve());
            w.kill("SIGTERM");
          }),
      ),
    );
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
