/** One `omniname` subcommand. `run` returns the process exit code; only main.ts exits. */
export interface Command {
  name: string;
  summary: string;
  run(argv: string[]): Promise<number>;
}

/** Splits `--flag value` / `--flag=value` / `--bool` options from positional arguments. */
export function parseArgs(
  argv: string[],
  booleans: readonly string[] = [],
): {
  positional: string[];
  options: Record<string, string | true>;
} {
  const positional: string[] = [];
  const options: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      if (eq > 0) options[a.slice(2, eq)] = a.slice(eq + 1);
      else if (booleans.includes(a.slice(2)) || i + 1 >= argv.length || argv[i + 1].startsWith("--"))
        options[a.slice(2)] = true;
      else options[a.slice(2)] = argv[++i];
    } else positional.push(a);
  }
  return { positional, options };
}
