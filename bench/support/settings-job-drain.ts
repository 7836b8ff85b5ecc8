import { readFileSync } from "node:fs";
import { runSettingsWinnerJobs } from "../../src/workers/settings-winner-jobs.js";
import { createScoringRanker } from "../../src/scoring/scoring-ranker.js";
import { createStore } from "../../src/store/create-store.js";

/**
 * Runs the settings changes' winner.changed jobs waiting in the store of DATABASE_URL / DATA_DIR
 * to the end, as an API process does (pages of 500 names), and prints how long that took and what
 * it appended, with the peaks (sampled every 10 ms) of the JS heap and of the anonymous memory
 * (RssAnon: RSS without the database file's mapped pages, which the reads touch). The bench reads
 * the process's peak RSS around it (GNU time).
 */
const store = await createStore({
  databaseUrl: process.env.DATABASE_URL || undefined,
  dataDir: process.env.DATA_DIR ?? ".",
});
try {
  const anon = () => Number(/RssAnon:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
  let heapPeak = process.memoryUsage().heapUsed;
  let anonPeak = anon();
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    anonPeak = Math.max(anonPeak, anon());
  }, 10);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const run = await runSettingsWinnerJobs({ store, ranker: createScoringRanker(), clock: Date.now });
  const used = process.cpuUsage(cpu);
  clearInterval(sampler);
  process.stdout.write(
    `jobs: ${run.pages} pages, ${run.events} events in ${Math.round(performance.now() - started)} ms ` +
      `(${Math.round((used.user + used.system) / 1000)} ms CPU), JS heap peak ${Math.round(heapPeak / 2 ** 20)} MB, RssAnon peak ${Math.round(anonPeak / 1024)} MB\n`,
  );
} finally {
  await store.close();
}
