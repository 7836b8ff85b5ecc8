import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { startRole } from "./omniname-role.js";

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

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

export async function startNpmStart(env: NodeJS.ProcessEnv, timeoutMs = 180_000): Promise<NpmStart> {
  const { child, match, stop } = await startRole(
    env,
    /omniname is up: http:\/\/[^:\s]+:(\d+)\/[\s\S]*demo API key:\s+(\S+)/,
    timeoutMs,
  );
  const cpu = async () => {
    const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) / USER_HZ) * 1e6;
  };
  return { child, port: Number(match[1]), demoKey: match[2], cpu, stop };
}
