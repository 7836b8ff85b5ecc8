import type { FastifyInstance } from "fastify";
import { Registry } from "prom-client";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiWorkers } from "../../src/workers/api-workers.js";
import type { Crawler } from "../../src/crawler/crawler.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { callData } from "../../src/devnet/deploy.js";
import { DEVNET_DEPLOYER, type Devnet } from "../../src/devnet/devnet.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { fnsAdapter } from "../../src/providers/fns/fns.adapter.js";
import type { Store } from "../../src/store/store.js";
import {
  rpcCall,
  senderFor,
  startCrawler,
  startPausedDevnet,
  tempStore,
  waitFor,
} from "../crawler/crawler-harness.js";
import { startFeedApp } from "../helpers/feed-app.js";
import { openFeed, type Received } from "../helpers/sse-client.js";
import { type startReceiver, until as untilTrue } from "../webhooks/receiver.js";

const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const BOB = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const DEPLOYER = DEVNET_DEPLOYER.toLowerCase();

describe("the change feed on the devnet", () => {
  let devnet: Devnet;
  let store: Store;
  let cleanup: () => Promise<void>;
  let crawler: Crawler;
  let app: FastifyInstance;
  let workers: ApiWorkers;
  let base: string;
  let key: string;
  let polygonOnlyKey: string;
  let polygon: string;
  let sources: CrawlerSource[];
  const registry = new Registry();
  const feeds: Array<{ close(): void }> = [];
  // A webhook receiver on 127.0.0.1 that verifies the signatures (standardwebhooks): it gets the
  // same events as the stream, from the deliverer of the same app.
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const hooked = () => receiver.received.filter((r) => r.path === "/devnet");

  const fns = () => sources.find((s) => s.id === "fns-polygon")!.contracts.addresses.registry as Hex;
  const tokenOf = (name: string) => BigInt(fnsAdapter.tokenIdOf(name));
  const mine = async (txs: Array<{ to: Hex; data: Hex }> = []) => {
    const sender = await senderFor(polygon);
    if (txs.length > 0) await sender.send(txs);
    return sender.mine();
  };
  const feed = (query = "", headers: Record<string, string> = {}) => {
    const f = openFeed(`${base}/svc/api/v1/changes${query}`, { "api-key": key, ...headers });
    feeds.push(f);
    return f;
  };
  const until = (events: Received[], n: number, what: string, ms = 5_000) =>
    waitFor(async () => (events.length >= n ? events : null), ms, what);

  beforeAll(async () => {
    const t = await tempStore();
    store = t.store;
    cleanup = t.cleanup;
    devnet = await startPausedDevnet(t.dir, ["POLYGON", "BSC"]);
    polygon = devnet.manifest.networks.POLYGON!.rpcUrl;
    sources = sourcesFromManifest(devnet.manifest);
    ({ crawler } = startCrawler(store, sources, { finality: 10, sync: { pollIntervalMs: 50 } }));
    ({
      app,
      workers,
      base,
      key,
      otherKey: polygonOnlyKey,
      receiver,
    } = await startFeedApp(store, {
      name: "feed",
      hookPath: "/devnet",
      disabled: "POLYGON",
      registry,
    }));
    await waitFor(async () => crawler.status().every((s) => s.state === "live"), 15_000, "live sources");
  }, 60_000);
  afterAll(async () => {
    for (const f of feeds) f.close();
    await crawler?.stop();
    await workers?.stop();
    await app?.close();
    await devnet?.stop();
    await receiver?.close();
    await cleanup?.();
  });

  it("streams domain.created, domain.updated and domain.removed with block, transaction and time", async () => {
    const all = feed();
    const onlyFeed = feed("?domains=feed.metaverse&types=domain.updated");
    const byAddress = feed(`?addresses=${BOB.toUpperCase().replace("0X", "0x")}`);
    const disabled = openFeed(`${base}/svc/api/v1/changes`, { "api-key": polygonOnlyKey });
    feeds.push(disabled);
    await Promise.all([all.opened, onlyFeed.opened, byAddress.opened, disabled.opened]);

    const mined = Date.now();
    const block = await mine([
      {
        to: fns(),
        data: callData("FNSRegistry", "mintWithRecords", [
          DEPLOYER,
          "feed",
          "metaverse",
          ["crypto.ETH.address"],
          [ALICE],
        ]),
      },
    ]);
    const [created] = await until(all.events, 1, "domain.created");
    const latency = created.at - mined;
    expect(created.type).toBe("domain.created");
    expect(created.data).toMatchObject({
      type: "domain.created",
      domain: "feed.metaverse",
      tld: "metaverse",
      network: "POLYGON",
      provider: "NAMESPACE_A",
      block: { number: block.blockNumber },
    });
    expect(created.data.domain).toBe("feed.metaverse");
    expect(created.id).toBe(String(created.data.id));
    expect(created.data.block.hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(created.data.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Date.parse(created.data.time)).toBeGreaterThan(0);
    expect(created.data.block.time).not.toBeNull();
    expect(latency).toBeLessThan(3_000);
    console.log(`block mined → domain.created on the SSE stream: ${latency} ms`);

    await mine([
      {
        to: fns(),
        data: callData("FNSRegistry", "set", ["crypto.ETH.address", BOB, tokenOf("feed.metaverse")]),
      },
      {
        to: fns(),
        data: callData("FNSRegistry", "transferFrom", [DEPLOYER, ALICE, tokenOf("feed.metaverse")]),
      },
    ]);
    const [, updated] = await until(all.events, 2, "domain.updated");
    expect(updated.type).toBe("domain.updated");
    expect(updated.data).toMatchObject({
      owner: { from: DEPLOYER, to: ALICE },
      records: { added: [], removed: [], changed: [{ key: "crypto.ETH.address", from: ALICE, to: BOB }] },
    });
    expect(Number(updated.id)).toBeGreaterThan(Number(created.id));

    await mine([{ to: fns(), data: callData("FNSRegistry", "burn", [tokenOf("feed.metaverse")]) }]);
    const [, , removed] = await until(all.events, 3, "domain.removed");
    expect(removed).toMatchObject({ type: "domain.removed", data: { owner: { from: ALICE, to: null } } });

    // The filters: one domain and one type; an address (owner or record value, any case).
    await until(onlyFeed.events, 1, "the filtered stream");
    expect(onlyFeed.events.map((e) => e.type)).toEqual(["domain.updated"]);
    await until(byAddress.events, 1, "the address stream");
    expect(byAddress.events.map((e) => e.type)).toEqual(["domain.updated"]);
    // A project with POLYGON disabled hears nothing of it.
    expect(disabled.events).toEqual([]);

    // The webhook got the three, signed, in order (one name).
    await untilTrue("the three at the webhook", () => hooked().length >= 3, 5_000);
    expect(hooked().map((r) => [r.json.type, r.json.data.id, r.verified])).toEqual([
      ["domain.created", created.data.id, true],
      ["domain.updated", updated.data.id, true],
      ["domain.removed", removed.data.id, true],
    ]);
    console.log(`block mined → domain.created at the webhook receiver: ${hooked()[0]!.at - mined} ms`);

    const metrics = await registry.metrics();
    expect(metrics).toMatch(/omniname_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(metrics).toMatch(/omniname_feed_clients \d+/);
    expect(metrics).toMatch(/omniname_feed_events_sent_total\{type="domain.created"\} [1-9]/);
  });

  it("resumes from Last-Event-ID or ?after= with every event after the cursor", async () => {
    const page = await store.changeLog.findChangeEventsAfter(0, 100);
    const first = page[0].id;
    const viaQuery = feed(`?after=${first}`);
    const viaHeader = feed("", { "last-event-id": String(first) });
    await until(viaQuery.events, page.length - 1, "replay via after");
    await until(viaHeader.events, page.length - 1, "replay via Last-Event-ID");
    expect(viaQuery.events.map((e) => Number(e.id))).toEqual(page.slice(1).map((e) => e.id));
    expect(viaHeader.events.map((e) => Number(e.id))).toEqual(page.slice(1).map((e) => e.id));
  });

  it("retracts the events of a reorg and streams the corrected state", async () => {
    const all = feed("?tlds=reorg");
    await all.opened;
    for (let i = 0; i < 2; i++) await mine();
    const snapshot = await rpcCall<string>(polygon, "evm_snapshot");
    await mine([{ to: fns(), data: callData("FNSRegistry", "mint", [ALICE, "fork", "reorg"]) }]);
    await mine();
    const [orphan] = await until(all.events, 1, "the orphaned creation");
    expect(orphan.type).toBe("domain.created");
    expect(await rpcCall<boolean>(polygon, "evm_revert", [snapshot])).toBe(true);
    await mine([{ to: fns(), data: callData("FNSRegistry", "mint", [BOB, "fork", "reorg"]) }]);
    for (let i = 0; i < 3; i++) await mine();
    await waitFor(
      async () =>
        all.events.some((e) => e.type === "domain.created" && e.data.state.owner === BOB) ? true : null,
      8_000,
      "the new branch's creation",
    );
    const types = all.events.map((e) => e.type);
    const retracted = all.events.find((e) => e.type === "change.retracted")!;
    expect(retracted.data).toMatchObject({ retracts: orphan.data.id, domain: "fork.reorg" });
    expect(retracted.data.retracted).toMatchObject({ type: "domain.created" });
    // Retraction, then the corrected state (the orphaned name gone), then the new branch.
    expect(types.indexOf("change.retracted")).toBeLessThan(types.lastIndexOf("domain.created"));
    expect(types).toContain("domain.removed");
    // The webhook hears the retraction too, before the corrected state.
    const atHook = await untilTrue(
      "the retraction at the webhook",
      () => {
        const r = hooked().filter((x) => x.json.data.tld === "reorg");
        return r.some((x) => x.json.type === "change.retracted") && r;
      },
      8_000,
    );
    const retraction = atHook.find((x) => x.json.type === "change.retracted")!;
    expect(retraction.verified).toBe(true);
    expect(retraction.json.data).toMatchObject({ retracts: orphan.data.id, domain: "fork.reorg" });
  });
});
