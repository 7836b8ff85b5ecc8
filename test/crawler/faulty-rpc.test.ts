import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { bulkSeed } from "../../src/devnet/bulk-seed.js";
import { pauseMining, resumeMining } from "../../src/devnet/tx-sender.js";
import { crawlToHead, dumpStore, rpcCall, tempStore } from "./crawler-harness.js";
import { type FaultProxy, SHRINK_SPAN, startFaultProxy, startShrinkingProxy } from "./fault-proxy.js";

describe("a faulty RPC", () => {
  let devnet: Devnet;
  let sources: CrawlerSource[];
  const proxies: FaultProxy[] = [];
  let dataDir = "";
  let cleanupDir: () => Promise<void>;

  beforeAll(async () => {
    const t = await tempStore();
    dataDir = t.dir;
    cleanupDir = t.cleanup;
    devnet = await startDevnet({
      dataDir,
      persist: false,
      blockTime: 0,
      logs: false,
      networks: ["ETHEREUM"],
      basePort: 20_000 + Math.floor(Math.random() * 20_000),
    });
    sources = sourcesFromManifest(devnet.manifest);
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await devnet?.stop();
    await cleanupDir?.();
  });

  it("completes the crawl with the same final store when 30% of calls fail", async () => {
    const direct = await tempStore();
    const faulty = await tempStore();
    try {
      await crawlToHead(direct.store, sources);
      const expected = await dumpStore(direct.store);
      expect(expected.length).toBeGreaterThan(1_000);

      // One proxy per chain; small initial ranges so that there are many getLogs calls to fail.
      const proxied: CrawlerSource[] = [];
      for (const s of sources) {
        let proxy = proxies.find((p) => (p as FaultProxy & { target?: string }).target === s.rpcUrl);
        if (!proxy) {
          proxy = Object.assign(
            await startFaultProxy(s.rpcUrl, { rate: 0.3, seed: proxies.length + 1, holdMs: 1_000 }),
            {
              target: s.rpcUrl,
            },
          );
          proxies.push(proxy);
        }
        proxied.push({ ...s, rpcUrl: proxy.url });
      }
      const { states, status } = await crawlToHead(faulty.store, proxied, {
        sync: { requestTimeoutMs: 200, initialRange: 8, maxRange: 64, backoffMs: 20 },
      });
      expect(Object.values(states).every((s) => s === "stopped")).toBe(true);
      for (const s of status) expect(s.checkpoint).toBe(s.head);
      expect(await dumpStore(faulty.store)).toEqual(expected);

      const injected = { "429": 0, "5xx": 0, timeout: 0, "too-many-results": 0, "null-block": 0 };
      let requests = 0;
      for (const p of proxies) {
        requests += p.requests;
        for (const [k, v] of Object.entries(p.injected)) injected[k as keyof typeof injected] += v;
      }
      // Every kind of fault happened, at about the configured rate.
      for (const v of Object.values(injected)) expect(v).toBeGreaterThan(0);
      const total = Object.values(injected).reduce((a, b) => a + b, 0);
      expect(total / requests).toBeGreaterThan(0.2);
    } finally {
      await direct.cleanup();
      await faulty.cleanup();
    }
  }, 120_000);

  it("reads each unfinalized block's header and logs once while its ranges shrink", async () => {
    // Every block is within finality, so each step reads the headers of its range before the
    // logs; a refused part is asked again in halves within its step, with its headers.
    const direct = await tempStore();
    const shrinking = await tempStore();
    // UNS: three filters, so a part is in flight after the one being written (ENS has none).
    const source = sources.find((s) => s.provider === "NAMESPACE_B") as CrawlerSource;
    // Every seventh block is "dense": a part of several blocks holding one is refused too, while
    // the parts requested after it are answered.
    const proxy = await startShrinkingProxy(source.rpcUrl, {
      refuse: (from, to) => Math.floor(to / 7) > Math.floor((from - 1) / 7),
    });
    try {
      await crawlToHead(direct.store, [source], { finality: 100_000 });
      const { states, status } = await crawlToHead(shrinking.store, [{ ...source, rpcUrl: proxy.url }], {
        finality: 100_000,
        sync: { initialRange: 64, maxRange: 64 },
      });
      expect(Object.values(states)).toEqual(["stopped"]);
      expect(status[0].checkpoint).toBe(status[0].head);
      expect(await dumpStore(shrinking.store)).toEqual(await dumpStore(direct.store));
      expect(proxy.refused, "the ranges shrank").toBeGreaterThan(3);
      // The head's header is read again once caught up: the check that the last block stands.
      const head = status[0].head as number;
      const twice = [...proxy.headerReads].filter(([n, count]) => count > 1 && n !== head);
      expect(proxy.headerReads.size, "headers were read").toBeGreaterThan(SHRINK_SPAN);
      expect(twice, "blocks whose header was read more than once").toEqual([]);
      // A refused part is asked again in halves; the parts requested after it are kept.
      const logsTwice = [...proxy.logReads].filter(([, count]) => count > 1);
      expect(proxy.logReads.size, "logs were read").toBeGreaterThan(SHRINK_SPAN);
      expect(logsTwice, "blocks whose logs were answered more than once").toEqual([]);
    } finally {
      await proxy.close();
      await direct.cleanup();
      await shrinking.cleanup();
    }
  }, 120_000);

  it("ends on the new chain when the blocks of the headers it kept are replaced while ranges shrink", async () => {
    // The chain grows by names of one batch (the old branch); the crawler reads its headers, and
    // before they are answered the chain is reverted and grows other names, longer (the new
    // branch). The headers and parts the crawler holds while its parts shrink are the old branch's.
    // UNS: three filters, so a part is in flight after the one being written (ENS has none).
    const source = sources.find((s) => s.provider === "NAMESPACE_B") as CrawlerSource;
    const rpc = source.rpcUrl;
    const forkAt = Number(await rpcCall<string>(rpc, "eth_blockNumber"));
    const snapshot = await rpcCall<string>(rpc, "evm_snapshot");
    const seed = async (runId: string, names: number) => {
      const chains = await devnet.chains();
      await Promise.all(chains.map((c) => pauseMining(c.sender.rpc)));
      await bulkSeed(chains, { names, batchSize: 2, runId });
      await Promise.all(chains.map((c) => resumeMining(c.sender.rpc, 0)));
    };
    await seed("oldbranch", 6);
    const oldHead = Number(await rpcCall<string>(rpc, "eth_blockNumber"));
    let reorged = false;
    const proxy = await startShrinkingProxy(rpc, {
      before: async (calls) => {
        const past = calls.some((c) => c.method === "eth_getBlockByNumber" && Number(c.params[0]) > forkAt);
        if (reorged || !past) return;
        reorged = true;
        expect(await rpcCall<boolean>(rpc, "evm_revert", [snapshot])).toBe(true);
        await seed("newbranch", 8);
        while (Number(await rpcCall<string>(rpc, "eth_blockNumber")) <= oldHead)
          await rpcCall(rpc, "evm_mine");
      },
    });
    const direct = await tempStore();
    const shrinking = await tempStore();
    try {
      const { states, status } = await crawlToHead(shrinking.store, [{ ...source, rpcUrl: proxy.url }], {
        finality: 100_000,
        sync: { initialRange: 64, maxRange: 64 },
      });
      expect(reorged, "the chain was replaced under the crawler").toBe(true);
      expect(Object.values(states)).toEqual(["stopped"]);
      expect(status[0].checkpoint).toBe(status[0].head);
      await crawlToHead(direct.store, [source], { finality: 100_000 });
      const dump = await dumpStore(shrinking.store);
      expect(dump.some((l) => l.includes("newbranch"))).toBe(true);
      expect(dump.some((l) => l.includes("oldbranch"))).toBe(false);
      expect(dump).toEqual(await dumpStore(direct.store));
    } finally {
      await proxy.close();
      await direct.cleanup();
      await shrinking.cleanup();
    }
  }, 120_000);
});
