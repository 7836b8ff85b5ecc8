import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

/**
 * `omniname start` from the build (bin/omniname.js) with exactly `env`, up once its output
 * matches `ready` (a banner line); `stop` sends SIGTERM and waits for the exit (its DNS workers go
 * with it), SIGKILL after 30 s.
 */
export interface RunningRole {
  child: ChildProcess;
  match: RegExpExecArray;
  stop(): Promise<void>;
}

const ROOT = join(import.meta.dirname, "..", "..");

export function startRole(env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs = 180_000): Promise<RunningRole> {
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
      reject(new Error(`omniname start was not up in ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    child.once("exit", (code) => reject(new Error(`omniname start exited with ${code}:\n${out}`)));
    const poll = setInterval(() => {
      const m = ready.exec(out);
      if (!m) return;
      clearInterval(poll);
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({ child, match: m, stop });
    }, 100);
  });
}
