import v8 from "node:v8";

/** One `omniname` subcommand. `run` returns the process exit code; only main.ts exits. */
export interface Command {
  name: string;
  summary: string;
  /**
   * A one-shot job that walks the whole map (snapshot, zone export, rescore, `tlds refresh`, KYC
   * import): main.ts bounds its heap's growth (`boundHeapGrowth`), so its peak RSS is what it holds,
   * not the garbage V8 lets pile up between full collections.
   */
  walksMap?: boolean;
  /** The full help (`omniname NAME --help`), when the summary is not enough: every option and subcommand. */
  usage?: string;
  run(argv: string[]): Promise<number>;
}

/**
 * Whether the arguments ask for help: `--help` or `-h` anywhere before a `--`, after the command
 * or any of its subcommands (`omniname devnet simulate --help`). Such a call prints the help and
 * does nothing else: it never starts, resumes or changes anything.
 */
export function asksForHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === "--") return false;
    if (a === "--help" || a === "-h") return true;
  }
  return false;
}

/** The help of a command: its usage, or `usage: omniname` and its summary. */
export function helpOf(command: Command): string {
  if (command.usage !== undefined) return command.usage.endsWith("\n") ? command.usage : `${command.usage}\n`;
  return `usage: omniname ${command.summary}\n`;
}

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent.
 * V8's own factor (1.1 to 4, higher for a fast allocator) let a snapshot export's old generation
 * reach ~150 MB between collections that kept ~40 MB: at 1,000,000 domains peak RSS 288-299 MB,
 * at 10,000,000 339 MB (bench/HISTORY.md, "Scale"). At 20 % the same export peaked at 176-178 MB
 * in the same CPU time (45.6-46.5 s user, against 45.0).
 */
export const WALK_HEAP_GROWING_PERCENT = 20;

/**
 * Sets V8's heap growing factor for the rest of the process. V8 reads this flag each time it sets
 * the old generation's next limit (after every full collection), so it takes effect after the
 * heap exists; `--max-old-space-size` would not (it is read once, when the heap is set up) and
 * would turn a large live set into a crash instead of a slower run.
 */
export function boundHeapGrowth(percent = WALK_HEAP_GROWING_PERCENT): void {
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
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
