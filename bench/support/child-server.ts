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

/** A figure a child server reports for itself when asked (serveAsChild answers "cpu" and "rss"). */
function askChild(child: ChildProcess, what: "cpu" | "rss"): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (typeof m === "object" && m !== null && what in m) {
        child.off("message", on);
        resolve((m as Record<string, number>)[what]);
      }
    };
    child.on("message", on);
    child.send(what);
  });
}

/** The CPU time (user + system, µs) a child server reports for itself. */
export function cpuOf(child: ChildProcess): Promise<number> {
  return askChild(child, "cpu");
}

/** The peak RSS (MB) a child server reports for itself. */
export function peakRssOf(child: ChildProcess): Promise<number> {
  return askChild(child, "rss");
}

/**
 * The child's side (in the server script): sends `{ port }` over IPC, answers "cpu" with this
 * process's CPU time (µs) and "rss" with its peak RSS (MB), and on disconnect runs `close`, then exits.
 */
export function serveAsChild(port: number, close: () => Promise<unknown>): void {
  process.send?.({ port });
  process.on("message", (m) => {
    if (m === "cpu") {
      const u = process.cpuUsage();
      process.send?.({ cpu: u.user + u.system });
    } else if (m === "rss") {
      process.send?.({ rss: Math.round(process.resourceUsage().maxRSS / 1024) });
    }
  });
  process.on("disconnect", () => {
    void close().then(() => process.exit(0));
  });
}

/** The port a listening Fastify app (or node server) bound. */
export function boundPort(server: { address(): unknown }): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? (address as { port: number }).port : 0;
}
