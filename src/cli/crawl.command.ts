import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { type Command, parseArgs } from "./command.js";
import { crawlSignals, resolveSources, rewindSource, startCrawlerRole } from "./crawler-role.js";

const USAGE = `usage: omniname crawl [--exit-when-synced] [--sources id,id] [--rewind source:block]
  Crawls the chains of RPC_URL_* (mainnet contracts) or, with none set, the devnet of DATA_DIR/devnet.json.
  --exit-when-synced   stop once every source has reached its chain head
  --sources            crawl only these sources (fns-polygon, uns-ethereum, ens-ethereum, …)
  --rewind S:B         move source S back to block B (replaying its journal; clears a halt), then exit
`;

export const crawlCommand: Command = {
  name: "crawl",
  summary: "crawl [--exit-when-synced] [--sources ids] [--rewind source:block]: index the configured chains",
  usage: USAGE,
  async run(argv) {
    const { options } = parseArgs(argv, ["exit-when-synced", "help"]);
    if (options.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    const config = loadConfig();
    const only =
      typeof options.sources === "string" ? options.sources.split(",").map((s) => s.trim()) : undefined;
    // Checked before the store opens: a configuration without chains fails at once.
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
        await rewindSource(ctx.store, source, Number(block), crawlSignals(ctx.scoringLists));
        log.info({ source: id, block: Number(block) }, "source rewound");
        return 0;
      }
      const role = await startCrawlerRole(ctx, {
        only,
        exitWhenSynced: Boolean(options["exit-when-synced"]),
      });
      const stop = () => void role.stop();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      const [states] = await Promise.all([role.crawler.done(), role.snsDone]);
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
