import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Crawler } from "../../src/crawler/crawler.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import type { Store } from "../../src/store/store.js";
import { rpcCall, senderFor, unsMint, waitFor } from "./crawler-harness.js";
import { type HeadsWorld, openHeadsWorld } from "./heads-world.js";

const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

/**
 * The embedded devnet's head limit (`npm start`): the crawler indexes no block past what the
 * devnet's state file holds (maxHeadOf), and on a new head past it asks for a save through that
 * head (awaitMaxHeadOf) instead of waiting for the next periodic save: the block is indexed as soon
 * as the limit moved, and not one row of it before.
 */
describe("a source under a head limit", () => {
  let world: HeadsWorld;
  let store: Store;
  let crawler: Crawler;
  let sources: CrawlerSource[];
  let polygon: string;
  // The limit, and the raises the test holds back until it lets them go.
  let limit = 0;
  const asked: number[] = [];
  let held = true;
  const waiting: Array<() => void> = [];
  const letGo = () => {
    held = false;
    for (const r of waiting.splice(0)) r();
  };
  let failNext = false;
  const checkpoint = () => crawler.status()[0]?.checkpoint ?? -1;

  beforeAll(async () => {
    world = await openHeadsWorld();
    ({ store, sources, polygon } = world);
    limit = Number(await rpcCall<string>(polygon, "eth_blockNumber"));
    crawler = await world.follow({
      maxHeadOf: () => limit,
      awaitMaxHeadOf: async (_s, block) => {
        asked.push(block);
        if (failNext) {
          failNext = false;
          throw new Error("the save failed");
        }
        if (held) await new Promise<void>((r) => waiting.push(r));
        limit = Math.max(limit, block);
        return limit;
      },
    });
  });
  afterAll(async () => {
    letGo();
    await world?.close();
  });

  it("asks for the new head at once, writes nothing of it before the limit moved, then indexes it", async () => {
    const manager = sources[0].contracts.addresses.mintingManager as string;
    const sender = await senderFor(polygon);
    const start = limit;
    expect(checkpoint()).toBe(start);
    // The first blocks may come before the subscription is up: mine until the limit is asked for.
    await waitFor(
      async () => {
        await sender.send([unsMint(manager, ALICE, `limit${Date.now()}.x`, {})]);
        await sender.mine();
        return asked.length > 0;
      },
      30_000,
      "the limit asked for a mined head",
    );
    expect(asked[0]).toBeGreaterThan(start);
    // Held back: the source is at its step's write, and wrote none of the new blocks.
    await new Promise((r) => setTimeout(r, 300));
    expect(await store.domainMap.findDomainsByOwner(ALICE, {})).toEqual([]);
    expect(checkpoint()).toBe(start);
    letGo();
    const [found] = await waitFor(
      async () => {
        const ds = await store.domainMap.findDomainsByOwner(ALICE, {});
        return ds.length > 0 ? ds : null;
      },
      10_000,
      "the name indexed once the limit moved",
    );
    expect(found?.owner).toBe(ALICE);
    // Caught up with the chain, never past the limit.
    const head = Number(await rpcCall<string>(polygon, "eth_blockNumber"));
    await waitFor(async () => checkpoint() === head, 10_000, "caught up");
    expect(limit).toBeGreaterThanOrEqual(head);
  });

  it("a raise that fails writes nothing, and the next head tries again", async () => {
    const manager = sources[0].contracts.addresses.mintingManager as string;
    const sender = await senderFor(polygon);
    const before = (await store.domainMap.findDomainsByOwner(ALICE, {})).length;
    failNext = true;
    await sender.send([unsMint(manager, ALICE, `failed${Date.now()}.x`, {})]);
    const first = (await sender.mine()).blockNumber;
    await waitFor(async () => !failNext, 10_000, "the failing raise");
    expect(checkpoint()).toBeLessThan(first);
    expect(crawler.status()[0]?.state).toBe("live");
    // The next head: asked again, and the failed raise's block indexed with it.
    const asks = asked.length;
    await sender.mine();
    await waitFor(async () => asked.length > asks, 10_000, "asked again");
    await waitFor(async () => checkpoint() > first, 10_000, "past the failed block");
    await waitFor(
      async () => (await store.domainMap.findDomainsByOwner(ALICE, {})).length > before,
      10_000,
      "the name of the failed raise's block indexed",
    );
  });
});
