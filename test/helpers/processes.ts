import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** True while a process with this id exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The fields of /proc/PID/stat after the command name (which may hold spaces): state, ppid, … */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Gone, or a zombie nobody has reaped yet: either way no longer running. */
export function hasEnded(pid: number): boolean {
  if (!isAlive(pid)) return true;
  try {
    return statFields(pid)[0] === "Z";
  } catch {
    return true;
  }
}

/** The live (not zombie) children of `ppid` whose command line contains `marker` (from /proc). */
export function childrenOf(ppid: number, marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [state, parent] = statFields(entry);
      if (Number(parent) !== ppid || state === "Z") continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU time a process has used, in clock ticks (user + system). */
export function cpuTicks(pid: number): number {
  const f = statFields(pid);
  return Number(f[11]) + Number(f[12]);
}

/** A child process with everything it wrote so far, stdout and stderr together. */
export interface OutputProcess {
  child: ChildProcess;
  output: () => string;
}

/** Spawns `node [args…]` (stdin closed), collecting its stdout and stderr into `output()`. */
export function spawnWithOutput(args: readonly string[], options: SpawnOptions): OutputProcess {
  const child = spawn(process.execPath, [...args], { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  return { child, output: () => out };
}
