import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { exportSnapshot, importSnapshot } from "../store/snapshot.js";
import { type Command, parseArgs } from "./command.js";

export const snapshotCommand: Command = {
  name: "snapshot",
  walksMap: true,
  summary:
    "snapshot export FILE [--no-journal] | snapshot import FILE: move the whole map as JSON Lines (import: atomic)",
  async run(argv) {
    const { positional, options } = parseArgs(argv, ["no-journal"]);
    const [action, file] = positional;
    if ((action !== "export" && action !== "import") || !file) {
      process.stderr.write(
        "usage: omniname snapshot export FILE [--no-journal] | omniname snapshot import FILE\n",
      );
      return 2;
    }
    // One pass over the map: the read connection's cache and memory map would only hold pages.
    const ctx = await createContext(loadConfig(), undefined, { sqlite: { mmapBytes: 0, cacheEntries: 0 } });
    try {
      const started = performance.now();
      const counts =
        action === "export"
          ? await exportSnapshot(ctx.store, file, { journal: !options["no-journal"] })
          : await importSnapshot(ctx.store, file);
      const ms = performance.now() - started;
      const rate = Math.round(counts.domains / Math.max(ms / 1000, 0.001));
      process.stdout.write(
        `${action}ed ${JSON.stringify(counts)} in ${Math.round(ms)} ms (${rate} domains/s)\n`,
      );
      return 0;
    } finally {
      await ctx.store.close();
    }
  },
};
