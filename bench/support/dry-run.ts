import { dryRunSettings } from "../../src/accounts/settings-dry-run.js";
import { createScoringRanker } from "../../src/scoring/scoring-ranker.js";
import { createStore } from "../../src/store/create-store.js";

/**
 * The console's settings dry run over the store of DATABASE_URL / DATA_DIR, as the scale bench
 * measures it: a project that puts NAMESPACE_B first (every name held more than once may change
 * winner). Prints the result's counts; the bench reads the time and peak RSS around the process.
 */
const store = await createStore({
  databaseUrl: process.env.DATABASE_URL || undefined,
  dataDir: process.env.DATA_DIR ?? ".",
});
try {
  const r = await dryRunSettings(
    { store, ranker: createScoringRanker() },
    {},
    { providerPriority: ["NAMESPACE_B", "NAMESPACE_A", "NAMESPACE_C"] },
    Date.now(),
  );
  process.stdout.write(`dry run: ${r.scanned} names scanned, ${r.changed} change winner\n`);
} finally {
  await store.close();
}
