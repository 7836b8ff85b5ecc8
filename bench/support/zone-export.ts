import { exportZones, ZONE_EXPORT_SQLITE_READS } from "../../src/dns/zone-export.js";
import { createResolution } from "../../src/resolution/resolution.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";

// A child process: `zone export` of the bench's SQLite file into <dir>, alone in its process so
// that its peak RSS is the export's own, with the command's read tuning. Prints one JSON line:
// { ms, maxRssMiB, zones, names, namesPerSecond, cpuMs, namesPerCpuSecond }.
const [file, dir] = process.argv.slice(2);
const store = createSqliteStore(file, { ...ZONE_EXPORT_SQLITE_READS });
await store.migrate();
const started = performance.now();
const cpuBefore = process.cpuUsage();
const ranker = createScoringRanker();
const result = await exportZones(store, createResolution({ store: store.domainMap, ranker }), {
  ranker,
  outDir: dir,
  nameServers: ["ns1.omniname.test", "ns2.omniname.test"],
  hostmaster: "hostmaster.omniname.test",
  now: Date.now(),
});
const ms = Math.round(performance.now() - started);
// CPU time too: on a shared machine the wall time says more about the other processes.
const cpu = process.cpuUsage(cpuBefore);
const cpuMs = Math.round((cpu.user + cpu.system) / 1000);
await store.close();
const names = result.zones.reduce((n, z) => n + z.names, 0);
process.stdout.write(
  `${JSON.stringify({
    ms,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    zones: result.zones.length,
    names,
    namesPerSecond: Math.round((names * 1000) / Math.max(1, ms)),
    cpuMs,
    namesPerCpuSecond: Math.round((names * 1000) / Math.max(1, cpuMs)),
    files: result.zones.map((z) => ({ tld: z.tld, file: z.file })),
  })}\n`,
);
