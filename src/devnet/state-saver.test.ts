import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AnvilInstance, findFreePortRange, randomPortBase, startAnvil } from "./anvil.js";
import { devnetRpc } from "./rpc.js";
import { createStateSaver } from "./state-saver.js";

interface Block {
  number: string;
  hash: string;
}

describe("the devnet state saver", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-state-"));
  const started: AnvilInstance[] = [];
  afterAll(async () => {
    for (const a of started) await a.stop(2_000);
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (statePath: string) => {
    const port = await findFreePortRange(1, randomPortBase());
    const anvil = await startAnvil({ chainId: 137, port, noMining: true, statePath });
    started.push(anvil);
    return { anvil, rpc: devnetRpc(anvil.rpcUrl) };
  };
  const mine = async (rpc: ReturnType<typeof devnetRpc>, blocks: number) => {
    for (let i = 0; i < blocks; i++) await rpc.call("evm_mine");
  };
  const blocks = async (rpc: ReturnType<typeof devnetRpc>, upTo: number) => {
    const out: string[] = [];
    for (let n = 0; n <= upTo; n++)
      out.push((await rpc.call<Block>("eth_getBlockByNumber", [`0x${n.toString(16)}`, false])).hash);
    return out;
  };

  it("keeps, through a SIGKILL of the chain, every block up to the saved head with its hash", async () => {
    const path = join(dir, "anvil-polygon.json.gz");
    const first = await start(path);
    const saver = createStateSaver(first.rpc, path, -1);
    await mine(first.rpc, 5);
    expect(await saver.save()).toBe(5);
    expect(saver.savedHead()).toBe(5);
    const saved = await blocks(first.rpc, 5);
    await mine(first.rpc, 4); // not saved: lost with the crash
    process.kill(first.anvil.pid, "SIGKILL");
    await first.anvil.exited;

    const second = await start(path);
    expect(Number(await second.rpc.call("eth_blockNumber"))).toBe(5);
    expect(await blocks(second.rpc, 5)).toEqual(saved);
    // Only the state file is left: the temporary one was renamed over it, and the plain copy
    // anvil loaded was removed once it answered.
    expect(readdirSync(dir)).toEqual(["anvil-polygon.json.gz"]);
  });

  it("saves through a new block when asked (saveThrough), past a save in flight that read an older head", async () => {
    const path = join(dir, "anvil-through.json.gz");
    const chain = await start(path);
    const saver = createStateSaver(chain.rpc, path, -1);
    await mine(chain.rpc, 2);
    expect(await saver.saveThrough(2)).toBe(2);
    // Already held: no save, the same answer.
    expect(await saver.saveThrough(1)).toBe(2);
    // A save starts (it reads head 2), then block 3 is mined before the caller asks for it.
    const inFlight = saver.save();
    await mine(chain.rpc, 1);
    const through = saver.saveThrough(3);
    expect(await inFlight).toBeGreaterThanOrEqual(2);
    expect(await through).toBe(3);
    expect(saver.savedHead()).toBe(3);
  });

  it("lets empty blocks wait (emptyBlocksSaveMs), and saves at once through a block with a transaction", async () => {
    const path = join(dir, "anvil-empty.json.gz");
    const chain = await start(path);
    let now = 1_000_000;
    const saver = createStateSaver(chain.rpc, path, -1, { emptyBlocksSaveMs: 5_000, clock: () => now });
    await mine(chain.rpc, 1);
    expect(await saver.saveThrough(1)).toBe(1);
    await mine(chain.rpc, 2);
    // Empty, and the last save is recent: the file stays at block 1.
    expect(await saver.saveThrough(3)).toBe(1);
    // A transaction in block 4: saved at once, with the empty blocks before it.
    await chain.rpc.call("eth_sendTransaction", [
      {
        from: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        to: "0x70997970c51812dc3a010c7d01b50e0aadb4dc8f",
        value: "0x1",
      },
    ]);
    await mine(chain.rpc, 1);
    expect(await saver.saveThrough(4)).toBe(4);
    await mine(chain.rpc, 1);
    expect(await saver.saveThrough(5)).toBe(4);
    // Past the interval, empty blocks are saved too.
    now += 5_000;
    expect(await saver.saveThrough(5)).toBe(5);
  });
});
