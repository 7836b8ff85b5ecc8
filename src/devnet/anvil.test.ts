import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anvilArgs, anvilCommand, findFreePortRange, randomPortBase, startAnvil } from "./anvil.js";
import { devnetRpc } from "./rpc.js";
import { pauseMining, resumeMining } from "./tx-sender.js";
import { hasEnded, isAlive } from "../../test/helpers/processes.js";

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen({ port, host: "127.0.0.1" }, () => resolve(s));
  });
}

describe("anvil", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-anvil-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["automine", { chainId: 1, port: 9000 }, [], ["--block-time", "--no-mining", "--state", "--timestamp"]],
    ["interval mining", { chainId: 56, port: 9000, blockTime: 1 }, ["--block-time", "1"], ["--no-mining"]],
    [
      "no mining wins over a block time",
      { chainId: 56, port: 9000, blockTime: 1, noMining: true },
      ["--no-mining"],
      ["--block-time"],
    ],
    [
      "genesis timestamp on a fresh chain",
      { chainId: 137, port: 9000, genesisTimestamp: 1_700_000_000 },
      ["--timestamp", "1700000000"],
      [],
    ],
  ] as const)("builds the arguments for %s", (_, options, present, absent) => {
    const args = anvilArgs(options);
    expect(args.slice(0, 6)).toEqual([
      "--host",
      "127.0.0.1",
      "--port",
      "9000",
      "--chain-id",
      String(options.chainId),
    ]);
    for (const p of present) expect(args).toContain(p);
    for (const a of absent) expect(args).not.toContain(a);
  });

  it("starts a saved chain with its saved genesis timestamp, so anvil's own block 0 is the saved one", () => {
    const state = join(dir, "state.json");
    writeFileSync(state, "{}");
    const args = anvilArgs({ chainId: 1, port: 9000, statePath: state, genesisTimestamp: 1_700_000_000 });
    expect(args).toContain("--load-state");
    expect(args[args.indexOf("--timestamp") + 1]).toBe("1700000000");
    // anvil's own dumps write in place: the state saver writes the file instead.
    expect(args).not.toContain("--state");
    expect(args).not.toContain("--dump-state");
  });

  it("finds consecutive free ports past a busy one", async () => {
    const base = await findFreePortRange(4, randomPortBase());
    const busy = await listen(base + 1);
    try {
      const found = await findFreePortRange(4, base);
      expect(found).toBeGreaterThan(base + 1);
    } finally {
      busy.close();
    }
  });

  it("starts on 127.0.0.1 with the chain id, answers RPC, and stops its process", async () => {
    const port = await findFreePortRange(1, randomPortBase());
    const anvil = await startAnvil({ chainId: 1313161554, port });
    expect(anvil.rpcUrl).toBe(`http://127.0.0.1:${port}`);
    expect(Number(await devnetRpc(anvil.rpcUrl).call("eth_chainId"))).toBe(1313161554);
    expect(isAlive(anvil.pid)).toBe(true);
    await anvil.stop();
    expect(anvil.isRunning()).toBe(false);
    expect(isAlive(anvil.pid)).toBe(false);
  });

  it("mines nothing while paused, then a block a second once interval mining resumes", async () => {
    const port = await findFreePortRange(1, randomPortBase());
    const anvil = await startAnvil({ chainId: 137, port, noMining: true });
    try {
      const rpc = devnetRpc(anvil.rpcUrl);
      const head = async () => Number(await rpc.call("eth_blockNumber"));
      await pauseMining(rpc);
      await new Promise((r) => setTimeout(r, 1_200));
      expect(await head()).toBe(0);
      await resumeMining(rpc, 1);
      await new Promise((r) => setTimeout(r, 2_300));
      expect(await head()).toBeGreaterThanOrEqual(2);
    } finally {
      await anvil.stop();
    }
  });

  it("fails with anvil's message when the port is taken", async () => {
    const port = await findFreePortRange(1, randomPortBase());
    const busy = await listen(port);
    try {
      await expect(startAnvil({ chainId: 1, port })).rejects.toThrow(/did not start/);
    } finally {
      busy.close();
    }
    expect(existsSync(dir)).toBe(true);
  });

  it("runs anvil under setpriv's parent-death SIGKILL where setpriv exists, directly otherwise", () => {
    const [withSetpriv, args] = anvilCommand(["--port", "1"], true);
    expect(withSetpriv).toBe("/usr/bin/setpriv");
    expect(args.slice(0, 3)).toEqual(["--pdeathsig", "KILL", "--"]);
    expect(args.slice(-2)).toEqual(["--port", "1"]);
    const [direct, directArgs] = anvilCommand(["--port", "1"], false);
    expect(direct).toMatch(/\/anvil$/);
    expect(directArgs).toEqual(["--port", "1"]);
  });

  it("ends its chain when its parent is killed with SIGKILL (no exit handler runs)", async () => {
    const script = join(dir, "parent.mts");
    const anvilModule = new URL("./anvil.ts", import.meta.url).pathname;
    writeFileSync(
      script,
      `import { findFreePortRange, randomPortBase, startAnvil } from ${JSON.stringify(anvilModule)};
const a = await startAnvil({ chainId: 1, port: await findFreePortRange(1, randomPortBase()) });
console.log("anvil " + a.pid);
setInterval(() => {}, 1000);
`,
    );
    const parent = spawn(process.execPath, ["--import", "tsx", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    parent.stdout?.on("data", (d) => {
      out += d;
    });
    const anvilPid = await new Promise<number>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /anvil (\d+)/.exec(out);
        if (m) {
          clearInterval(timer);
          resolve(Number(m[1]));
        } else if (parent.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`the parent exited: ${out}`));
        }
      }, 50);
    });
    expect(isAlive(anvilPid)).toBe(true);
    parent.kill("SIGKILL");
    for (let i = 0; i < 200 && !hasEnded(anvilPid); i++) await new Promise((r) => setTimeout(r, 50));
    const ended = hasEnded(anvilPid);
    if (!ended) process.kill(anvilPid, "SIGKILL");
    expect(ended).toBe(true);
  }, 60_000);
});
