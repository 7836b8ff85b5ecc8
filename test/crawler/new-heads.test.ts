import { createServer } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watchNewHeads, wsUrlOf } from "../../src/crawler/new-heads.js";
import { findFreePortRange, randomPortBase, startAnvil, type AnvilInstance } from "../../src/devnet/anvil.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { senderFor, unsMint, waitFor } from "./crawler-harness.js";
import { type HeadsWorld, openHeadsWorld } from "./heads-world.js";

const SILENT = pino({ level: "silent" });
const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

describe("the WebSocket URL of an RPC URL", () => {
  it.each([
    ["http://127.0.0.1:8545", "ws://127.0.0.1:8545/"],
    ["https://node.example/v1/secret", "wss://node.example/v1/secret"],
    ["ws://127.0.0.1:8546", "ws://127.0.0.1:8546/"],
    ["ftp://127.0.0.1", null],
    ["not a url", null],
  ])("%s → %s", (rpc, ws) => {
    expect(wsUrlOf(rpc)).toBe(ws);
  });
});

describe("watching new heads", () => {
  let anvil: AnvilInstance;
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 137, port: await findFreePortRange(1, randomPortBase()) });
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  it("wakes on a mined block, and keeps one that came between two waits", async () => {
    const watch = watchNewHeads(wsUrlOf(anvil.rpcUrl) ?? "", SILENT);
    const rpc = devnetRpc(anvil.rpcUrl);
    const never = new AbortController().signal;
    try {
      // The subscription is made in the background: mine until it has seen a block.
      await waitFor(
        async () => {
          await rpc.call("evm_mine");
          return (await watch.next(200, never)) === "head" ? true : null;
        },
        20_000,
        "a head over the WebSocket",
      );
      expect(watch.live).toBe(true);
      await rpc.call("evm_mine");
      await waitFor(
        async () => ((await watch.next(100, never)) === "head" ? true : null),
        5_000,
        "kept head",
      );
      // Nothing mined since: the wait ends by its interval.
      expect(await watch.next(300, never)).toBe("timeout");
    } finally {
      watch.close();
    }
  });

  it("an aborted wait returns at once", async () => {
    const watch = watchNewHeads(wsUrlOf(anvil.rpcUrl) ?? "", SILENT);
    const stop = new AbortController();
    stop.abort();
    try {
      expect(await watch.next(600_000, stop.signal)).toBe("timeout");
    } finally {
      watch.close();
    }
  });

  it("a node without a WebSocket leaves polling in charge: every wait ends by its interval", async () => {
    // A port that accepts and closes: not a WebSocket server.
    const closing = createServer((s) => s.destroy());
    await new Promise<void>((r) => closing.listen(0, "127.0.0.1", r));
    const { port } = closing.address() as { port: number };
    const watch = watchNewHeads(`ws://127.0.0.1:${port}`, SILENT);
    try {
      for (let i = 0; i < 3; i++) expect(await watch.next(200, new AbortController().signal)).toBe("timeout");
      expect(watch.live).toBe(false);
    } finally {
      watch.close();
      closing.close();
    }
  });
});

describe("a caught-up source follows new heads", () => {
  let world: HeadsWorld;

  beforeAll(async () => {
    world = await openHeadsWorld();
    await world.follow();
  });
  afterAll(async () => {
    await world?.close();
  });

  it("indexes a name minted after it caught up, without waiting for its poll interval", async () => {
    const { store, sources, polygon } = world;
    const manager = sources[0].contracts.addresses.mintingManager as string;
    const sender = await senderFor(polygon);
    // The first blocks may come before the subscription is up: mint until the name is indexed.
    const found = await waitFor(
      async () => {
        await sender.send([unsMint(manager, ALICE, `heads${Date.now()}.x`, {})]);
        await sender.mine();
        const [d] = await store.domainMap.findDomainsByOwner(ALICE, {});
        return d ?? null;
      },
      30_000,
      "a minted name indexed",
    );
    expect(found.owner).toBe(ALICE);
  });
});
