import { loadConfig } from "../config/load-config.js";
import { type Devnet, chainsOf, findRunningDevnet, startDevnet } from "../devnet/devnet.js";
import { type DevnetManifest, solanaOfManifest } from "../devnet/manifest.js";
import { type SimulationReport, startSimulation } from "../devnet/simulate.js";
import { AppError } from "../domain/errors.js";
import { type Command, parseArgs } from "./command.js";

const USAGE = `usage:
  omniname devnet [--block-time <s>] [--port <first port>] [--no-seed] [--bulk <names>] [--fresh] [--no-persist]
      Starts one anvil per network (ETHEREUM 1, POLYGON 137, BSC 56, AURORA 1313161554) on
      consecutive ports, deploys the FNS, UNS and ENS registries, seeds the fixture world, starts a
      local Solana (JSON-RPC and WebSocket) with the .sol names of the Solana Name Service, writes
      DATA_DIR/devnet.json and stays up until Ctrl-C. Chain state is kept in
      DATA_DIR/anvil-<network>.json.gz and DATA_DIR/solana.json.gz, so the next start resumes it
      (--fresh starts over).
  omniname devnet simulate [--rate <ops/s>] [--duration <s>] [--seed <n>]
      Keeps registering and changing names (.sol names too) at a steady rate (default 5 ops/s) on
      the running devnet of DATA_DIR, or on one it starts itself.
`;

function numberOption(options: Record<string, string | true>, name: string, fallback: number): number {
  const raw = options[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (raw === true || !Number.isFinite(n) || n < 0) {
    throw new AppError("INVALID_PARAMETER", `--${name} needs a non-negative number`);
  }
  return n;
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (signal: string) => {
      process.removeListener("SIGINT", on);
      process.removeListener("SIGTERM", on);
      resolve(signal);
    };
    process.once("SIGINT", on);
    process.once("SIGTERM", on);
  });
}

function printManifest(manifest: DevnetManifest, path: string): void {
  const out = process.stdout;
  out.write(`devnet manifest: ${path}\n`);
  for (const [network, n] of Object.entries(manifest.networks)) {
    if (!n) continue;
    out.write(
      `  ${network.padEnd(9)} chain ${String(n.chainId).padEnd(10)} ${n.rpcUrl}${n.wsUrl ? ` ${n.wsUrl}` : ""}\n`,
    );
    for (const [provider, source] of Object.entries(n.contracts)) {
      const roles = Object.entries(source!.addresses).map(([role, a]) => `${role}=${a}`);
      out.write(`    ${provider} from block ${source!.startBlock}: ${roles.join(" ")}\n`);
    }
  }
}

function formatReport(r: SimulationReport): string {
  const kinds = Object.entries(r.byKind).map(([k, n]) => `${k} ${n}`);
  return `${r.ops} ops (${kinds.join(", ")}), ${r.reverted} reverted, ${r.errors} errors`;
}

async function start(argv: string[]): Promise<number> {
  const { options } = parseArgs(argv, ["no-seed", "fresh", "no-persist"]);
  const config = loadConfig();
  const devnet = await startDevnet({
    dataDir: config.dataDir,
    blockTime: numberOption(options, "block-time", 1),
    basePort: numberOption(options, "port", 8545),
    seed: options["no-seed"] !== true,
    bulk: numberOption(options, "bulk", 0),
    fresh: options.fresh === true,
    persist: options["no-persist"] !== true,
    log: (m) => process.stdout.write(`${m}\n`),
  });
  printManifest(devnet.manifest, devnet.manifestPath);
  process.stdout.write("devnet up; Ctrl-C stops it (the chain state is saved)\n");
  await untilSignal();
  process.stdout.write("stopping the devnet…\n");
  await devnet.stop();
  return 0;
}

async function simulate(argv: string[]): Promise<number> {
  const { options } = parseArgs(argv);
  const config = loadConfig();
  const rate = numberOption(options, "rate", 5);
  const duration = numberOption(options, "duration", 0);
  if (rate <= 0) throw new AppError("INVALID_PARAMETER", "--rate must be above 0");

  let own: Devnet | null = null;
  let manifest = await findRunningDevnet(config.dataDir);
  if (!manifest) {
    own = await startDevnet({ dataDir: config.dataDir, log: (m) => process.stdout.write(`${m}\n`) });
    manifest = own.manifest;
    printManifest(manifest, own.manifestPath);
  }
  const sim = startSimulation(await chainsOf(manifest), {
    rate,
    seed: numberOption(options, "seed", 0x5eed),
    solana: solanaOfManifest(manifest) ?? undefined,
  });
  process.stdout.write(`simulating ${rate} ops/s${duration > 0 ? ` for ${duration} s` : "; Ctrl-C stops"}\n`);
  const progress = setInterval(() => process.stdout.write(`${formatReport(sim.report)}\n`), 5_000);
  await (duration > 0 ? new Promise((r) => setTimeout(r, duration * 1000)) : untilSignal());
  clearInterval(progress);
  const report = await sim.stop();
  process.stdout.write(`done: ${formatReport(report)}\n`);
  if (own) await own.stop();
  return report.errors > 0 ? 1 : 0;
}

export const devnetCommand: Command = {
  name: "devnet",
  summary: "Run the local multichain devnet (anvil): deploy, seed, simulate",
  usage: USAGE,
  run: async (argv: string[]) => {
    const [sub, ...rest] = argv;
    if (sub === "help" || sub === "--help" || sub === "-h") {
      process.stdout.write(USAGE);
      return 0;
    }
    if (sub === "simulate") return simulate(rest);
    if (sub !== undefined && !sub.startsWith("--")) {
      process.stderr.write(`omniname devnet: unknown subcommand "${sub}"\n${USAGE}`);
      return 2;
    }
    return start(argv);
  },
};
