// The crawler as its own process, for the crash-safety test: `omniname crawl` with the arguments
// given, configured by the environment (DATA_DIR with devnet.json, CRAWLER_* settings).
import { crawlCommand } from "../../src/cli/crawl.command.js";

crawlCommand.run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
  },
);
