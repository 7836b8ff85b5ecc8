import { type ChildProcess, spawn } from "node:child_process";

/** A real `omniname start` process, up once it printed its banner's API address. */
export interface ServerProcess {
  child: ChildProcess;
  /** The origin the banner printed (`http://127.0.0.1:PORT`). */
  url: string;
  /** Everything the process wrote so far, stdout and stderr. */
  output: () => string;
}

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

/** Starts `omniname start [args…]` with exactly `env`; rejects if it exits or is not up in time. */
export function startServerProcess(
  env: NodeJS.ProcessEnv,
  args: readonly string[] = [],
  readyTimeoutMs = 60_000,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, "start", ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not ready in ${readyTimeoutMs / 1000} s:\n${out}`)),
      readyTimeoutMs,
    );
    child.once("exit", (code) => reject(new Error(`exited with ${code}:\n${out}`)));
    const poll = setInterval(() => {
      const m = /omniname is up: (http:\/\/[^\s]+)\/svc\/api\/v1/.exec(out);
      if (!m) return;
      clearInterval(poll);
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({ child, url: m[1], output: () => out });
    }, 100);
  });
}

/** SIGTERM: a graceful stop (which flushes the usage counters); resolves with the exit code. */
export function stopServerProcess(s: ServerProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve(s.child.exitCode);
    s.child.once("exit", (code) => resolve(code));
    s.child.kill("SIGTERM");
  });
}
