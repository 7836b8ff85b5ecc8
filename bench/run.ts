import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Runs every bench/*.bench.ts in its own process, one after the other (they measure throughput:
 * two at once would share the cores), and fails when one fails. `npm run bench -- resolve` runs
 * only the benches whose file name contains "resolve". The scale bench (ten million names, about an
 * hour and tens of GB of disk) runs only when named: `npm run bench -- scale`.
 */
const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2];
const benches = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts") && (filter ? f.includes(filter) : !f.startsWith("scale.")))
  .sort();
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const r = spawnSync(process.execPath, ["--import", "tsx", join(here, file)], { stdio: "inherit" });
  if (r.status !== 0) {
    failed++;
    console.error(`${file} failed (exit ${r.status ?? r.signal})`);
  }
}
console.log(`\n${benches.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
