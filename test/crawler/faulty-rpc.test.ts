import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { crawlToHead, dumpStore, tempStore } from "./crawler-harness.js";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.js";

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
});
