import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `npm start` as an operator runs it (after the build: `node bin/omniname.js start`), all roles:
 * the embedded devnet with the demo world, the crawler and the API, here on a PostgreSQL database
 * (DATABASE_URL) and a fresh DATA_DIR. Up once the banner printed the API address and the demo key.
 */
export interface NpmStart {
  child: ChildProcess;
  port: number;
  demoKey: string;
  /** The process's CPU time (user + system) so far, µs, from /proc/<pid>/stat. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

const ROOT = join(import.meta.dirname, "..", "..");
/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

export function startNpmStart(env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<NpmStart> {
  const child = spawn(process.execPath, [join(ROOT, "bin", "omniname.js"), "start"], {
    cwd: ROOT,
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
  const cpu = async () => {
    const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) / USER_HZ) * 1e6;
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`npm start was not up in ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    child.once("exit", (code) => reject(new Error(`npm start exited with ${code}:\n${out}`)));
    const poll = setInterval(() => {
      const up = /omniname is up: http:\/\/[^:\s]+:(\d+)\//.exec(out);
      const key = /demo API key:\s+(\S+)/.exec(out);
      if (!up || !key) return;
      clearInterval(poll);
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({ child, port: Number(up[1]), demoKey: key[1], cpu, stop });
    }, 100);
  });
}
