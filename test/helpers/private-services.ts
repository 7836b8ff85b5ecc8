import { execFileSync, spawn } from "node:child_process";
import { chownSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

/**
 * A PostgreSQL server of the test's own (initdb in a temporary directory, a free port on
 * 127.0.0.1), so that a test can stop, restart and kill it without touching the machine's shared
 * server that other test files use. The server runs as the `postgres` user (PostgreSQL refuses to
 * run as root); `stop` and `start` keep the data, `destroy` removes it.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  start(): void;
  /** A fast shutdown (`pg_ctl stop -m fast`): sessions are cut, as in a restart or a failover. */
  stop(): void;
  restart(): void;
  destroy(): void;
}

function pgBin(name: string): string {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  return join("/usr/lib/postgresql", versions[0], "bin", name);
}

/** Runs a PostgreSQL program as the postgres user when we are root (CI and this machine are). */
function asPostgres(program: string, args: string[]): void {
  const root = process.getuid?.() === 0;
  const [cmd, argv] = root ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  execFileSync(cmd, argv, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), "omniname-pg-"));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const port = await freePort();
  asPostgres(pgBin("initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = () =>
    asPostgres(pgBin("pg_ctl"), ["-D", data, "-o", options, "-l", join(dir, "server.log"), "-w", "start"]);
  const stop = () => asPostgres(pgBin("pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    restart: () =>
      asPostgres(pgBin("pg_ctl"), [
        "-D",
        data,
        "-o",
        options,
        "-l",
        join(dir, "server.log"),
        "-m",
        "fast",
        "-w",
        "restart",
      ]),
    destroy() {
      try {
        stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A Redis server of the test's own on a free port, without persistence (as the machine's): `stop`
 * loses its data, as a Redis without persistence does in production; `stop({ keepData: true })`
 * saves it first (SHUTDOWN SAVE), so that `start` finds it again: a Redis that was only away.
 */
export interface PrivateRedis {
  url: string;
  start(): Promise<void>;
  stop(opts?: { keepData?: boolean }): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "omniname-redis-"));
  let child: ReturnType<typeof spawn> | null = null;
  const cli = (...args: string[]) =>
    execFileSync("redis-cli", ["-p", String(port), ...args], { stdio: "pipe", timeout: 10_000 });
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 100; i++) {
      try {
        if (cli("ping").toString().includes("PONG")) return;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the private redis-server did not start");
  };
  const stop = (opts: { keepData?: boolean } = {}) =>
    new Promise<void>((resolve) => {
      const c = child;
      if (c === null || c.exitCode !== null) return resolve();
      c.once("exit", () => resolve());
      if (opts.keepData) {
        try {
          cli("shutdown", "save");
        } catch {
          // the connection closes as it shuts down
        }
      } else {
        rmSync(join(dir, "dump.rdb"), { force: true });
        c.kill("SIGTERM");
      }
    });
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
