import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnWithOutput } from "./processes.js";

/** A real `omniname start` process, up once it printed its banner's API address. */
export interface ServerProcess {
  child: ChildProcess;
  /** The origin the banner printed (`http://127.0.0.1:PORT`). */
  url: string;
  /** Everything the process wrote so far, stdout and stderr. */
  output: () => string;
}

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

/**
 * Starts `omniname start [args…]` with exactly `env`; rejects if it exits or is not up in time.
 * `ownGroup`: in a process group of its own (its id the child's pid), as a terminal or a supervisor
 * starts it, so that a test can signal the whole group as Ctrl-C does.
 */
export function startServerProcess(
  env: NodeJS.ProcessEnv,
  args: readonly string[] = [],
  readyTimeoutMs = 60_000,
  ownGroup = false,
): Promise<ServerProcess> {
  const { child, output } = spawnWithOutput(["--import", "tsx", MAIN, "start", ...args], {
    env,
    detached: ownGroup,
  });
  return untilUp(
    child,
    output,
    /omniname is up: (http:\/\/[^\s]+)\/svc\/api\/v1/,
    readyTimeoutMs,
    ownGroup,
  ).then((m) => ({ child, url: m[1], output }));
}

/** SIGTERM: a graceful stop (which flushes the usage counters); resolves with the exit code. */
export function stopServerProcess(s: ServerProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve(s.child.exitCode);
    s.child.once("exit", (code) => resolve(code));
    s.child.kill("SIGTERM");
  });
}

/**
 * The environment of an API-role process (`OMNINAME_ROLES=api`): the test's own environment with
 * `DATA_DIR`, port 0 on loopback, `LOG_LEVEL=warn`, and no PUBLIC_URL or REDIS_URL inherited;
 * `extra` is applied last (it may set either, or DATABASE_URL: "" for SQLite).
 */
export function apiRoleEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    OMNINAME_ROLES: "api",
  };
  delete env.PUBLIC_URL;
  delete env.REDIS_URL;
  return { ...env, ...extra };
}

/**
 * The environment of one API-role process of a scale-out test: apiRoleEnv with a fresh DATA_DIR
 * (pushed onto `dirs` for the caller to remove), the shared database and pepper.
 */
export function apiProcessEnv(
  opts: { databaseUrl: string; pepper: string; dirs: string[]; name: string },
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  const dataDir = mkdtempSync(join(tmpdir(), `omniname-${opts.name}-`));
  opts.dirs.push(dataDir);
  return apiRoleEnv(dataDir, { DATABASE_URL: opts.databaseUrl, API_KEY_PEPPER: opts.pepper, ...extra });
}

/** A real `omniname start` process running the dns role, up once its banner named the DNS address. */
export interface DnsRoleProcess {
  child: ChildProcess;
  host: string;
  port: number;
  /** Everything the process wrote so far, stdout and stderr. */
  output: () => string;
}

/**
 * Starts `omniname start --fixtures` with `OMNINAME_ROLES=dns` on SQLite in `dataDir`, `DNS_PORT=0`
 * (the banner names the port the system chose) and `extra` applied last.
 */
export function startDnsRoleProcess(
  dataDir: string,
  extra: NodeJS.ProcessEnv = {},
  readyTimeoutMs = 110_000,
): Promise<DnsRoleProcess> {
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", OMNINAME_ROLES: "dns", DNS_PORT: "0" };
  const { child, output } = spawnWithOutput(["--import", "tsx", MAIN, "start", "--fixtures"], {
    env: { ...env, LOG_LEVEL: "warn", ...extra },
  });
  return untilUp(child, output, /DNS \(UDP\+TCP\):\s+([\d.]+):(\d+)/, readyTimeoutMs, false).then((m) => ({
    child,
    host: m[1],
    port: Number(m[2]),
    output,
  }));
}

/**
 * Resolves with the banner's match once the process's output shows it; rejects if the process
 * exits first, or is not up in `timeoutMs`. Then it is stopped (its group with `group`) before the
 * test fails, so that no server outlives the test.
 */
function untilUp(
  child: ChildProcess,
  output: () => string,
  banner: RegExp,
  timeoutMs: number,
  group: boolean,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      child.removeAllListeners("exit");
      try {
        if (group && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {}
      reject(new Error(`not ready in ${timeoutMs / 1000} s:\n${output()}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output()}`));
    });
    const poll = setInterval(() => {
      const m = banner.exec(output());
      if (!m) return;
      clearInterval(poll);
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve(m);
    }, 100);
  });
}
