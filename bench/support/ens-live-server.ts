import { readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { ensLiveFor } from "../../src/cli/ens-live.setup.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { DevnetManifest } from "../../src/devnet/manifest.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { boundPort, serveAsChild } from "./child-server.js";

// A child process: the production app over the ENS live bench's SQLite file, with the live ENS
// lookups of the devnet whose devnet.json is in <dir> (as `npm start` wires them). argv: <sqlite
// file> <pepper> <dir> <cache ms>. Sends { port } over IPC; answers "cpu" with its CPU time (µs).
const [file, pepper, dir, cacheMs] = process.argv.slice(2) as [string, string, string, string];
const store = createSqliteStore(file);
await store.migrate();
const config = loadConfig({}, { dataDir: dir, ensLiveCacheMs: Number(cacheMs) });
const logger = pino({ level: "warn" });
const ctx: AppContext = { config, logger, store, ranker: createScoringRanker(), pepper, clock: Date.now };
const manifest = JSON.parse(readFileSync(join(dir, "devnet.json"), "utf8")) as DevnetManifest;
const app = await buildApp(ctx, {
  services: createConsoleServices(ctx),
  closeServices: true,
  console: false,
  ensLive: ensLiveFor(config, manifest, logger),
});
await app.listen({ host: "127.0.0.1", port: 0 });
serveAsChild(boundPort(app.server), () => app.close().then(() => store.close()));
