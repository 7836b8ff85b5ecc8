import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";

const SUPPORT = import.meta.dirname;

/** A server script of bench/support/ in a child process (tsx), once it sent `{ port }` over IPC. */
export function startChild(script: string, args: string[]): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(join(SUPPORT, script), args, {
      execArgv: ["--import", "tsx"],
      stdio: "inherit",
    });
    child.once("message", (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** Disconnects a child (it closes itself), killing it after 5 s. */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.disconnect();
  });
}

/** The CPU time (user + system, µs) a child server reports for itself (api-server.ts answers "cpu"). */
export function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (typeof m === "object" && m !== null && "cpu" in m) {
        child.off("message", on);
        resolve((m as { cpu: number }).cpu);
      }
    };
    child.on("message", on);
    child.send("cpu");
  });
}
