import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import { AppError } from "../domain/errors.js";
import { devnetRpc, waitForRpc } from "./rpc.js";

const ANVIL_BIN = fileURLToPath(
  new URL("../../node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil", import.meta.url),
);

/**
 * util-linux's setpriv (essential on Debian) sets the kernel's parent-death signal before it
 * executes anvil: a `kill -9` of omniname alone, which no exit handler sees, still ends its chains,
 * so the next start finds the ports free. Without it, anvil is spawned directly.
 */
const SETPRIV_BIN = "/usr/bin/setpriv";

/** The command that runs anvil with `args`: under setpriv's parent-death SIGKILL where it exists. */
export function anvilCommand(args: string[], setprivPresent = existsSync(SETPRIV_BIN)): [string, string[]] {
  return setprivPresent
    ? [SETPRIV_BIN, ["--pdeathsig", "KILL", "--", ANVIL_BIN, ...args]]
    : [ANVIL_BIN, args];
}

/**
 * Block gas limit of the devnet chains. High on purpose: the batch functions register hundreds of
 * names in one transaction, and a block far below its gas target keeps the base fee falling.
 */
const DEVNET_GAS_LIMIT = 10_000_000_000n;

export interface AnvilOptions {
  chainId: number;
  port: number;
  /** Seconds between blocks; 0 = automine (a block per transaction, the test default). */
  blockTime?: number;
  /** No mining at all until told (`evm_mine`, `evm_setIntervalMining`): for seeding a fresh chain. */
  noMining?: boolean;
  /**
   * Start from this saved state when the file exists. anvil never writes it: the devnet's state
   * saver does, atomically (state-saver.ts). A `.gz` file (`anvil_dumpState`'s own bytes, as the
   * saver keeps them) is unzipped beside it for `--load-state`, which reads plain JSON only, and
   * the unzipped copy is removed once anvil answers.
   */
  statePath?: string;
  /**
   * anvil writes its whole state here when it exits (`--dump-state`): a large chain's dump without
   * the JSON-RPC answer of `anvil_dumpState`, which a string cannot hold past ~512 MB (state-cache.ts).
   */
  dumpStatePath?: string;
  /** Genesis timestamp (seconds): a fresh chain's (seeding replays older times), or a resumed chain's saved one. */
  genesisTimestamp?: number;
  /** Where anvil's own output goes; absent: discarded. */
  logPath?: string;
  /** How long anvil may take to answer after its start (loading a large state): default 20 s. */
  readyTimeoutMs?: number;
}

export interface AnvilInstance {
  readonly chainId: number;
  readonly port: number;
  readonly rpcUrl: string;
  readonly pid: number;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  isRunning(): boolean;
  /** SIGTERM, then SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

export function anvilArgs(o: AnvilOptions): string[] {
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(o.port),
    "--chain-id",
    String(o.chainId),
    "--gas-limit",
    String(DEVNET_GAS_LIMIT),
    "--disable-code-size-limit",
  ];
  if (o.noMining) args.push("--no-mining");
  else if (o.blockTime && o.blockTime > 0) args.push("--block-time", String(o.blockTime));
  // anvil mints its own block 0 even when it loads a state, and dumps it beside the loaded one:
  // a resumed chain gets the saved genesis timestamp too, so both blocks 0 are the same block.
  const fresh = !o.statePath || !existsSync(o.statePath);
  if (o.statePath && !fresh) args.push("--load-state", o.statePath);
  if (o.dumpStatePath) args.push("--dump-state", o.dumpStatePath);
  if (o.genesisTimestamp !== undefined) args.push("--timestamp", String(o.genesisTimestamp));
  return args;
}

/** Starts one anvil and resolves once its RPC answers with the expected chain id. */
export async function startAnvil(o: AnvilOptions): Promise<AnvilInstance> {
  if (!existsSync(ANVIL_BIN)) throw new AppError("INTERNAL_ERROR", `anvil binary not found at ${ANVIL_BIN}`);
  const unzipped = o.statePath?.endsWith(".gz") ? unzipState(o.statePath) : null;
  const [command, args] = anvilCommand(anvilArgs(unzipped ? { ...o, statePath: unzipped } : o));
  // Its own process group: a Ctrl-C or a SIGTERM sent to omniname's whole group (a terminal, a
  // supervisor's group stop) reaches omniname, which saves the chain's state and then stops it;
  // the signal reaching anvil too ended it first, and the last save failed.
  const child: ChildProcess = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  if (o.logPath) {
    // Two sources into one file: neither may end it; the exit does.
    const log = createWriteStream(o.logPath, { flags: "a" });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.once("close", () => log.end());
  } else {
    child.stdout?.resume();
  }
  let running = true;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      running = false;
      resolve();
    });
  });
  // Never leave an orphan chain behind when the parent exits without stopping it.
  const onExit = () => child.kill("SIGKILL");
  process.once("exit", onExit);

  const rpcUrl = `http://127.0.0.1:${o.port}`;
  const stop = async (timeoutMs = 10_000) => {
    process.removeListener("exit", onExit);
    if (!running) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    await exited;
    clearTimeout(timer);
  };

  try {
    const died = exited.then(() => {
      throw new Error("anvil exited");
    });
    died.catch(() => {}); // a later, normal exit must not surface as an unhandled rejection
    const chainId = await Promise.race([
      waitForRpc(devnetRpc(rpcUrl, { timeoutMs: 2_000 }), o.readyTimeoutMs ?? 20_000, () => !running),
      died,
    ]);
    if (chainId !== o.chainId)
      throw new AppError("INTERNAL_ERROR", `${rpcUrl} answers chain ${chainId}, not ${o.chainId}`);
    // Loaded: the plain copy is not the state file (the `.gz` is), and would only go stale.
    if (unzipped) rmSync(unzipped, { force: true });
  } catch (e) {
    await stop(2_000);
    throw new AppError(
      "INTERNAL_ERROR",
      `anvil on port ${o.port} did not start: ${stderr.trim() || (e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  return {
    chainId: o.chainId,
    port: o.port,
    rpcUrl,
    pid: child.pid ?? -1,
    exited,
    isRunning: () => running,
    stop,
  };
}

/** Listens on `port` of 127.0.0.1 and keeps it; null when it is taken. */
function holdPort(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(null));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve(server));
  });
}

const closeAll = (servers: Server[]) =>
  Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));

/**
 * The first port ≥ `start` such that `count` consecutive ports are free on 127.0.0.1. The range is
 * held while it is probed, so concurrent probes (here or in another process) step past each other
 * rather than in lockstep; another process may still take a port before the caller binds it, which
 * chain-start.ts's onFreePorts retries.
 */
export async function findFreePortRange(count: number, start = 8545): Promise<number> {
  for (let base = start; base + count <= 65535; base += 1) {
    const held: Server[] = [];
    let busyAt = -1;
    for (let i = 0; i < count; i++) {
      const server = await holdPort(base + i);
      if (!server) {
        busyAt = i;
        break;
      }
      held.push(server);
    }
    await closeAll(held);
    if (busyAt === -1) return base;
    base += busyAt; // skip past the busy port
  }
  throw new AppError("INTERNAL_ERROR", `no ${count} consecutive free ports from ${start}`);
}

/** A start port for tests: random in 20000–50000, so parallel runs rarely probe the same range. */
export function randomPortBase(): number {
  return 20_000 + Math.floor(Math.random() * 30_000);
}

/**
 * The plain JSON of a gzip state file, written beside it (`x.json.gz` → `x.json`) for anvil's
 * `--load-state`; the `.gz` path itself when it does not exist (a fresh chain).
 */
function unzipState(gz: string): string {
  if (!existsSync(gz)) return gz;
  const plain = gz.slice(0, -".gz".length);
  writeFileSync(`${plain}.tmp`, gunzipSync(readFileSync(gz)));
  renameSync(`${plain}.tmp`, plain);
  return plain;
}
