import pino from "pino";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { AnswerCache } from "../../src/dns/answer-cache.js";
import { createPublicZoneLookup, DNS_ONLY_STORE } from "../../src/dns/dns-role.js";
import { createDnsServer } from "../../src/dns/dns-server.js";
import { generateDnssecKeyPem, parseDnssecKeys } from "../../src/dns/dnssec-keys.js";
import { DnssecSigner } from "../../src/dns/dnssec-sign.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";

// A child process: the dns role over the bench's SQLite file, as `OMNINAME_ROLES=dns` runs it, so
// the load generator does not share its event loop. argv: <sqlite file>. Sends { port } over IPC.
const [file] = process.argv.slice(2);
// As a process of the dns role alone opens it (DNS_ONLY_STORE).
const store = createSqliteStore(file, DNS_ONLY_STORE.sqlite);
await store.migrate();
const ctx: AppContext = {
  config: loadConfig({}, { dataDir: "." }),
  logger: pino({ level: "warn" }),
  store,
  ranker: createScoringRanker(),
  pepper: "bench-pepper-bench-pepper",
  clock: Date.now,
};
const lookup = createPublicZoneLookup(ctx);
// BENCH_DNSSEC=1: signed answers for queries with DO (as DNSSEC=true; a key made for the run).
if (process.env.BENCH_DNSSEC === "1")
  lookup.dnssec = new DnssecSigner(parseDnssecKeys(generateDnssecKeyPem(), "bench"), ctx.clock);
await lookup.findZone(".");
// BENCH_DNS_CACHE=0 measures the server without its answer cache.
const cache = process.env.BENCH_DNS_CACHE === "0" ? null : new AnswerCache({ lookup, clock: ctx.clock });
const server = await createDnsServer({
  lookup,
  cache,
  host: "127.0.0.1",
  port: 0,
  tcpIdleMs: 10_000,
  tcpMaxClients: 256,
  // BENCH_DNS_UDP_BATCH=0: node:dgram (as DNS_UDP_BATCH=false), else the batched addon.
  udpBatch: process.env.BENCH_DNS_UDP_BATCH !== "0",
});
process.send?.({ port: server.port, udpPath: server.udpPath });
process.on("disconnect", () => {
  void server
    .close()
    .then(() => store.close())
    .then(() => process.exit(0));
});
