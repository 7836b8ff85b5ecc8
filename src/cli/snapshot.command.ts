import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { exportSnapshot, importSnapshot } from "../store/snapshot.js";
import { type Command, parseArgs } from "./command.js";

export const snapshotCommand: Command = {
  name: "snapshot",
  summary: "snapshot export FILE [--no-journal] | snapshot import FILE: move the whole map as JSON Lines",
  async run(argv) {
    const { positional, options } = parseArgs(argv, ["no-journal"]);
    const [action, file] = positional;
    if ((action !== "export" && action !== "import") || !file) {
      process.stderr.write(
        "usage: omniname snapshot export FILE [--no-journal] | omniname snapshot import FILE\n",
      );
      return 2;
    }
    const ctx = await createContext(loadConfig());
    try {
      const started = Date.now();
      const counts =
        action === "export"
          ? await exportSnapshot(ctx.store, file, { journal: !options["no-journal"] })
          : await importSnapshot(ctx.store, file);
      process.stdout.write(`${action}ed ${JSON.stringify(counts)} in ${Date.now() - started} ms\n`);
      return 0;
    } finally {
      await ctx.store.close();
    }
  },
};
