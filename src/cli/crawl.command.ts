import { Registry } from "prom-client";
import type { Config } from "../config/config.schema.js";
import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { type CrawlerSource, rollbackTo, type SignalsFn } from "../crawler/apply-range.js";
import { ChainReader } from "../crawler/chain-reader.js";
import { createCrawler } from "../crawler/crawler.js";
import { createCrawlerMetrics } from "../crawler/crawler-metrics.js";
import { createRpcClient } from "../crawler/rpc-client.js";
import {
  configuredNetworks,
  finalityOf,
  sourcesFromConfig,
  sourcesFromManifest,
} from "../crawler/sources.js";
import { findDevnetManifest } from "../devnet/manifest.js";
import { AppError } from "../domain/errors.js";
import { createBaseSignalsFn } from "../scoring/base-signals.js";
import { loadScoringLists } from "../scoring/scoring-lists.js";
import type { Store } from "../store/store.js";
import { type Command, parseArgs } from "./command.js";

/**
 * The sources this configuration crawls: the real chains of RPC_URL_* when any is set, else the
 * local devnet of DATA_DIR/devnet.json. `only` keeps the listed source ids.
 */
export function resolveSources(config: Config, only?: string[]): CrawlerSource[] {
  let sources: CrawlerSource[];
  if (configuredNetworks(config).length > 0) sources = sourcesFromConfig(config);
  else {
    const manifest = findDevnetManifest(config.dataDir);
    if (!manifest) {
      throw new AppError(
        "CONFIG_INVALID",
        `no chain to crawl: set RPC_URL_ETHEREUM/POLYGON/BSC/AURORA, or start the devnet (omniname devnet) so that ${config.dataDir}/devnet.json exists`,
      );
    }
    sources = sourcesFromManifest(manifest);
  }
  if (only && only.length > 0) {
    const unknown = only.filter((id) => !sources.some((s) => s.id === id));
    if (unknown.length > 0) throw new AppError("INVALID_PARAMETER", `unknown source ${unknown.join(", ")}`);
    sources = sources.filter((s) => only.includes(s.id));
  }
  return sources;
}

/** The crawler sync options of a configuration. */
export function syncOptionsOf(config: Config) {
  return {
    pollIntervalMs: config.crawlerPollIntervalMs,
    maxRange: config.crawlerMaxRange,
    initialRange: Math.min(config.crawlerInitialRange, config.crawlerMaxRange),
    requestTimeoutMs: config.crawlerRpcTimeoutMs,
  };
}

/** Moves a source back to `block` (a block on the canonical chain), replaying from its journal; clears a halt. */
export async function rewindSource(store: Store, source: CrawlerSource, block: number): Promise<void> {
  const reader = new ChainReader(createRpcClient({ url: source.rpcUrl }), source.chainId);
  const header = await reader.header(block);
  await rollbackTo(store, source, { blockNumber: block, blockHash: header.hash }, "syncing", Date.now());
}

const USAGE = `usage: omniname crawl [--exit-when-synced] [--sources id,id] [--rewind source:block]
  Crawls the chains of RPC_URL_* (mainnet contracts) or, with none set, the devnet of DATA_DIR/devnet.json.
  --exit-when-synced   stop once every source has reached its chain head
  --sources            crawl only these sources (fns-polygon, uns-ethereum, ens-ethereum, …)
  --rewind S:B         move source S back to block B (replaying its journal; clears a halt), then exit
`;

export const crawlCommand: Command = {
  name: "crawl",
  summary: "crawl [--exit-when-synced] [--sources ids] [--rewind source:block]: index the configured chains",
  async run(argv) {
    const { options } = parseArgs(argv, ["exit-when-synced", "help"]);
    if (options.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    const config = loadConfig();
    const only =
      typeof options.sources === "string" ? options.sources.split(",").map((s) => s.trim()) : undefined;
    const sources = resolveSources(config, only);
    const ctx = await createContext(config);
    const log = ctx.logger.child({ component: "crawler" });
    try {
      if (typeof options.rewind === "string") {
        const [id, block] = options.rewind.split(":");
        const source = sources.find((s) => s.id === id);
        if (!source || !/^\d+$/.test(block ?? "")) {
          process.stderr.write(USAGE);
          return 2;
        }
        await rewindSource(ctx.store, source, Number(block));
        log.info({ source: id, block: Number(block) }, "source rewound");
        return 0;
      }
      const signals = await loadSignals(config, ctx.store);
      const crawler = createCrawler({
        sources,
        store: ctx.store,
        logger: log,
        metrics: createCrawlerMetrics(new Registry()),
        sync: { ...syncOptionsOf(config), exitWhenSynced: Boolean(options["exit-when-synced"]) },
        finalityOf: (s) => finalityOf(config, s.network),
        signals,
      });
      const stop = () => void crawler.stop();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      crawler.start();
      const states = await crawler.done();
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      const halted = Object.entries(states).filter(([, s]) => s === "halted");
      if (halted.length > 0) log.error({ halted: halted.map(([id]) => id) }, "halted sources");
      else log.info({ states }, "crawler stopped");
      return halted.length > 0 ? 3 : 0;
    } finally {
      await ctx.store.close();
    }
  },
};

/** The scoring engine's base signals with the operator's lists, for every domain the crawler writes. */
export async function loadSignals(config: Config, store: Store): Promise<SignalsFn> {
  const lists = await loadScoringLists(config, await store.findKycOwners());
  // Index-wide facts (TLD origins, collisions) are the rescoring job's (jobs/rescore.job.ts).
  const ctx = { ...lists, tldOrigin: () => null };
  return createBaseSignalsFn(() => ctx);
}
