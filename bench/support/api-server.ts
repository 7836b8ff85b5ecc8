import pino from "pino";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { boundPort, serveAsChild } from "./child-server.js";

// A child process: the production app over the bench's SQLite file, so the load generator in the
// parent does not share this event loop. argv: <sqlite file> <pepper>. The app runs the v1 hooks
// as every app does (allowlists, plan rate limits and quotas, usage recording) and the scoring
// ranker, as the server role does. Sends { port } over IPC. A postgres:// URL instead of the file
// runs it over PostgreSQL.
const [file, pepper] = process.argv.slice(2);
const store = /^postgres(ql)?:\/\//.test(file) ? createPostgresStore(file) : createSqliteStore(file);
await store.migrate();
const ctx: AppContext = {
  config: loadConfig({}, { dataDir: "." }),
  logger: pino({ level: "warn" }),
  store,
  ranker: createScoringRanker(),
  pepper,
  clock: Date.now,
};
const app = await buildApp(ctx, {
  services: createConsoleServices(ctx),
  closeServices: true,
  console: false,
});
await app.listen({ host: "127.0.0.1", port: 0 });
serveAsChild(boundPort(app.server), () => app.close().then(() => store.close()));
