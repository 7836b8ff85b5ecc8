import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/** What one run of a CLI command cost: wall time, peak RSS (the kernel's, via GNU time) and its output. */
export interface CommandRun {
  seconds: number;
  peakRssMb: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `omniname ARGS` as an operator does (the build: `node bin/omniname.js`) under GNU time,
 * which reads the child's peak RSS from the kernel (getrusage ru_maxrss): the figure the issue's
 * memory bounds are about, including native memory (SQLite's cache, mmap'd pages touched).
 * Throws with the command's output when it fails.
 */
export function runOmniname(args: string[], env: NodeJS.ProcessEnv): CommandRun {
  return runMeasured([join(ROOT, "bin", "omniname.js"), ...args], env);
}

/** A bench support script (TypeScript, through tsx), measured as `runOmniname` measures a command. */
export function runScript(script: string, env: NodeJS.ProcessEnv): CommandRun {
  return runMeasured(["--import", "tsx", join(ROOT, "bench", "support", script)], env);
}

function runMeasured(args: string[], env: NodeJS.ProcessEnv): CommandRun {
  const r = spawnSync("/usr/bin/time", ["-f", "omniname-time %e %M", process.execPath, ...args], {
    cwd: ROOT,
    env,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  const m = /omniname-time ([\d.]+) (\d+)/.exec(r.stderr ?? "");
  if (r.status !== 0 || m === null)
    throw new Error(`omniname ${args.join(" ")} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return {
    seconds: Number(m[1]),
    peakRssMb: Number(m[2]) / 1024,
    stdout: r.stdout,
    stderr: r.stderr.replace(m[0], "").trim(),
  };
}

/** Bytes under a directory (files only, not following links). */
export function directoryBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += directoryBytes(p);
    else if (e.isFile()) total += statSync(p).size;
  }
  return total;
}

/**
 * A process's resident set now (VmRSS), MB, and its two parts: anonymous memory (the heap, native
 * allocations) and file pages (SQLite's memory-mapped read window: clean page cache the kernel can
 * take back, but counted in RSS).
 */
export function rssMbOf(pid: number): { total: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) / 1024;
  return { total: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") + kb("RssShmem") };
}

/**
 * CPU seconds (user + system, every thread) used so far by the live processes whose command line
 * `matches`, from /proc (clock ticks of 1/100 s, as on Linux everywhere). A process that ended
 * meanwhile is not counted: compare two readings of processes that live through both.
 */
export function cpuSecondsOf(matches: (commandLine: string) => boolean): number {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (!matches(commandLine)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name.
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // ended meanwhile
    }
  }
  return ticks / 100;
}
