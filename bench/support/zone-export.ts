import { exportZones } from "../../src/dns/zone-export.js";
import { createResolution } from "../../src/resolution/resolution.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";

// A child process: `zone export` of the bench's SQLite file into <dir>, alone in its process so
// that its peak RSS is the export's own. Prints one JSON line: { ms, maxRssMiB, zones, names }.
const [file, dir] = process.argv.slice(2);
const store = createSqliteStore(file);
await store.migrate();
const started = performance.now();
const result = await exportZones(store, createResolution({ store, ranker: createScoringRanker() }), {
  outDir: dir,
  nameServers: ["ns1.omniname.test", "ns2.omniname.test"],
  hostmaster: "hostmaster.omniname.test",
  now: Date.now(),
});
const ms = Math.round(performance.now() - started);
await store.close();
process.stdout.write(
  `${JSON.stringify({
    ms,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    zones: result.zones.length,
    names: result.zones.reduce((n, z) => n + z.names, 0),
    files: result.zones.map((z) => ({ tld: z.tld, file: z.file })),
  })}\n`,
);
