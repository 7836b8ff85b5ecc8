import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { Registry } from "prom-client";
import type { Hex } from "viem";
import type { CrawlerSource, SignalsFn } from "../../src/crawler/crawler-source.js";
import { type Crawler, createCrawler } from "../../src/crawler/crawler.js";
import { type CrawlerMetrics, createCrawlerMetrics } from "../../src/crawler/crawler-metrics.js";
import type { SyncOptions } from "../../src/crawler/crawler-source.js";
import type { DevnetNetworkName } from "../../src/devnet/deploy.js";
import { DEVNET_DEPLOYER, type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { unsCall } from "../../src/devnet/real-uns.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { createTxSender, pauseMining, type TxSender } from "../../src/devnet/tx-sender.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { rawDb } from "../helpers/raw-db.js";

export const SILENT: Logger = pino({ level: "silent" });

/** A private SQLite store in a temp directory. */
export async function tempStore(): Promise<{
  store: Store;
  dir: string;
  file: string;
  cleanup(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), "omniname-crawl-"));
  const file = join(dir, "omniname.db");
  const store = createSqliteStore(file);
  await store.migrate();
  return {
    store,
    dir,
    file,
    async cleanup() {
      await store.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A neutral score for every domain: these tests check what the crawler indexes, not how it is
 * scored (the scoring suites do), and compare stores crawled under the same signals.
 */
export const NEUTRAL_SIGNALS: SignalsFn = () => ({
  baseScore: 50,
  spam: false,
  csamOk: true,
  kyc: false,
  tags: [],
});

export const FAST_SYNC: Omit<SyncOptions, "finality" | "signals" | "maxHead"> = {
  pollIntervalMs: 100,
  maxRange: 100_000,
  requestTimeoutMs: 5_000,
  progressIntervalMs: 60_000,
};

export function startCrawler(
  store: Store,
  sources: CrawlerSource[],
  opts: {
    sync?: Partial<Omit<SyncOptions, "finality" | "signals" | "maxHead">>;
    finality?: number;
    logger?: Logger;
    signals?: SignalsFn;
  } = {},
): { crawler: Crawler; metrics: CrawlerMetrics } {
  const metrics = createCrawlerMetrics(new Registry());
  const crawler = createCrawler({
    sources,
    store,
    logger: opts.logger ?? SILENT,
    metrics,
    sync: { ...FAST_SYNC, ...opts.sync },
    finalityOf: () => opts.finality ?? 10,
    signals: opts.signals ?? NEUTRAL_SIGNALS,
  });
  crawler.start();
  return { crawler, metrics };
}

/** Crawls every source up to its head and returns. */
export async function crawlToHead(
  store: Store,
  sources: CrawlerSource[],
  opts: {
    sync?: Partial<Omit<SyncOptions, "finality" | "signals" | "maxHead">>;
    finality?: number;
    signals?: SignalsFn;
  } = {},
) {
  const { crawler, metrics } = startCrawler(store, sources, {
    ...opts,
    sync: { ...opts.sync, exitWhenSynced: true },
  });
  const states = await crawler.done();
  return { states, status: crawler.status(), metrics };
}

/**
 * The whole crawled state as sorted lines, ids replaced by token ids: two stores hold the same map
 * exactly when their dumps are equal.
 */
export async function dumpStore(store: Store): Promise<string[]> {
  const out: string[] = [];
  const tokenOf = new Map<number, string>();
  for await (const page of store.domainMap.iterateDomains(500)) {
    for (const d of page) {
      const { id, records, ...rest } = d;
      const key = `${d.network}/${d.provider}/${d.tokenId}`;
      tokenOf.set(id, key);
      out.push(`domain ${JSON.stringify(rest)}`);
      for (const r of records) out.push(`record ${key} ${JSON.stringify(r)}`);
    }
  }
  const reverse = await rawDb(store).selectFrom("reverse_records").selectAll().execute();
  for (const r of reverse)
    out.push(`reverse ${r.network}/${r.provider}/${r.address} → ${tokenOf.get(Number(r.domain_id))}`);
  const journal = await rawDb(store).selectFrom("journal").selectAll().execute();
  for (const j of journal) {
    const { id, ...rest } = j;
    out.push(
      `journal ${JSON.stringify({ ...rest, block_number: Number(rest.block_number), block_time: Number(rest.block_time) })}`,
    );
  }
  for (const c of await store.crawlerLog.listCheckpoints())
    out.push(`checkpoint ${c.sourceId} ${c.blockNumber} ${c.blockHash}`);
  return out.sort();
}

/** Polls `check` until it returns a value other than null/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | null | false>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== null && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A transaction sender on a devnet chain, from the deployer (minter of every registry). */
export async function senderFor(rpcUrl: string): Promise<TxSender> {
  return createTxSender(devnetRpc(rpcUrl), DEVNET_DEPLOYER);
}

export async function rpcCall<T>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  return devnetRpc(rpcUrl).call<T>(method, params);
}

/** The real MintingManager's issueWithRecords(to, labels, keys, values, withReverse) as a transaction. */
export function unsMint(mintingManager: string, to: string, name: string, records: Record<string, string>) {
  return {
    to: mintingManager as Hex,
    data: unsCall("MintingManager", "issueWithRecords", [
      to,
      name.split("."),
      Object.keys(records),
      Object.values(records),
      false,
    ]),
  };
}

/** An unseeded devnet of `networks` whose chains mine only when told (`sender.mine()`), on random ports. */
export async function startPausedDevnet(dataDir: string, networks: DevnetNetworkName[]): Promise<Devnet> {
  const devnet = await startDevnet({
    dataDir,
    persist: false,
    seed: false,
    blockTime: 0,
    logs: false,
    networks,
    basePort: 20_000 + Math.floor(Math.random() * 20_000),
  });
  for (const n of networks) await pauseMining(devnetRpc(devnet.manifest.networks[n]!.rpcUrl));
  return devnet;
}
