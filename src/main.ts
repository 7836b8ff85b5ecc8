#!/usr/bin/env node
import { asksForHelp, boundHeapGrowth, helpOf } from "./cli/command.js";
import { COMMANDS } from "./cli/commands.js";
import { isAppError } from "./domain/errors.js";

/** The exit status of a command that failed because the store could not be reached (EX_TEMPFAIL). */
const EXIT_STORE_UNAVAILABLE = 75;

/** The composition root and the only place the process exits. */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write("usage: omniname <command> [options]\n\ncommands:\n");
    for (const c of COMMANDS) process.stdout.write(`  ${c.name.padEnd(12)} ${c.summary}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`omniname: unknown command "${name}" (try omniname help)\n`);
    return 2;
  }
  if (asksForHelp(rest)) {
    process.stdout.write(helpOf(command));
    return 0;
  }
  if (command.walksMap) boundHeapGrowth();
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(
      `omniname: ${isAppError(e) ? `${e.code}: ${e.message}` : ((e as Error).stack ?? String(e))}\n`,
    );
    // The store away is a temporary failure (sysexits' EX_TEMPFAIL): a script or a scheduler may
    // run the command again; every other failure is 1.
    process.exit(isAppError(e) && e.code === "STORE_UNAVAILABLE" ? EXIT_STORE_UNAVAILABLE : 1);
  },
);
