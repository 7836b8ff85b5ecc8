import { join } from "node:path";

/**
 * The `server:`, `database:` and `log:` sections of a Knot secondary run by a test: everything in
 * `dir` (its run directory, zone storage and log, `dir/knot.log`), listening on 127.0.0.1@port.
 */
export function knotServerSections(dir: string, port: number): string[] {
  return [
    "server:",
    `  rundir: "${dir}"`,
    `  listen: 127.0.0.1@${port}`,
    "database:",
    `  storage: "${dir}"`,
    "log:",
    `  - target: "${join(dir, "knot.log")}"`,
    "    any: info",
  ];
}
